package timeline

import (
	"context"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// modelSchedule is tessel partition --model chain-12 --cluster
// four-one-slow, then tessel search on its placement: the old schedule of
// a timeline with a model.
func modelSchedule(t *testing.T) (*partition.Graph, *cluster.Cluster, *hetero.Report, *schedule.Schedule) {
	t.Helper()
	g, err := partition.Load("../testdata/hetero/chain-12.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Load("../testdata/hetero/four-one-slow.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := hetero.Run(context.Background(), g, c, hetero.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Cluster.Apply(r.Converted.Placement)
	if err != nil {
		t.Fatal(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 16}, search.Options{Effort: search.ReplanEffort, PhaseEffort: search.ReplanEffort, RefineEffort: search.ReplanEffort})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Schedule
	if err := s.SetCluster(r.Cluster, r.Converted.Placement); err != nil {
		t.Fatal(err)
	}
	return g, c, r, s
}

// Wu et al. §3 and S3: a device that leaves (or joins) means a new
// speed-aware split of the model onto the devices there, from the old
// stage boundaries; every step's schedule verifies, beside a fresh plan.
func TestRunModelLeaveAndJoin(t *testing.T) {
	g, c, r, old := modelSchedule(t)
	for _, tc := range []struct {
		name, file string
		devices    []int
	}{
		{"leave", `{"changes": [{"at": 10, "leave": [1]}]}`, []int{3}},
		{"join", `{"changes": [{"at": 10, "join": {"name": "spare", "speed": 1, "memory": 0}}]}`, []int{5}},
		{"leave, slow, join", `{"changes": [{"at": 10, "leave": [2]}, {"at": 20, "speed": {"device": 0, "speed": 0.5}}, {"at": 30, "join": {"name": "spare", "speed": 0.5, "memory": 0}}]}`, []int{3, 3, 4}},
	} {
		tl, err := Parse([]byte(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), old, tl, c, Options{Model: g, Fresh: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(rep.Steps) != len(tc.devices) {
			t.Fatalf("%s: %d steps", tc.name, len(rep.Steps))
		}
		for k, st := range rep.Steps {
			if st.Devices != tc.devices[k] || !st.Valid || st.Fresh == nil || st.Makespan < st.LowerBound {
				t.Errorf("%s: step %d: %+v", tc.name, k+1, st)
			}
			if tc.devices[k] != len(c.Devices) && (st.Repartition == "" || (st.Warm != WarmBoundaries && st.Warm != WarmBettered)) {
				t.Errorf("%s: step %d: devices changed without a new split: %+v", tc.name, k+1, st)
			}
		}
		if err := verify.Schedule(rep.Final); err != nil || rep.Final.Placement.Devices != tc.devices[len(tc.devices)-1] || rep.Final.Cluster == nil {
			t.Errorf("%s: final schedule: %v", tc.name, err)
		}
	}
	_ = r
}

// The warm start keeps the old boundaries: merging stages where devices
// left (its cut points a subset of the old ones), splitting them where
// devices joined (every old cut point kept), the devices left in their
// old order along the pipeline.
func TestWarmSplitKeepsBoundaries(t *testing.T) {
	_, c, r, _ := modelSchedule(t)
	old := r.Split.Cuts()
	in := func(sub, set []int) bool {
		for _, x := range sub {
			if !slices.Contains(set, x) {
				return false
			}
		}
		return true
	}
	// Device 1 leaves.
	q, was, err := Apply(c, Change{Leave: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	w := WarmSplit(hetero.NewCost(r.Cost.Model, q, r.TimeUnit), r.Split, was)
	if w == nil || len(w.Stages) != 3 || !in(w.Cuts(), old) {
		t.Fatalf("leave: %+v from cuts %v", w, old)
	}
	var order []int
	for _, d := range r.Split.Order() {
		if d != 1 {
			order = append(order, slices.Index(was, d))
		}
	}
	if !slices.Equal(w.Order(), order) {
		t.Errorf("leave: order %v, want %v", w.Order(), order)
	}
	// A device joins.
	q, was, err = Apply(c, Change{Join: &Join{Device: cluster.Device{Speed: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	w = WarmSplit(hetero.NewCost(r.Cost.Model, q, r.TimeUnit), r.Split, was)
	if w == nil || len(w.Stages) != 5 || !in(old, w.Cuts()) || w.Order()[4] != 4 {
		t.Fatalf("join: %+v from cuts %v", w, old)
	}
}

// A schedule that is not of the model's split is refused.
func TestRunModelNotTheSplit(t *testing.T) {
	g, c, _, _ := modelSchedule(t)
	other, err := partition.Load("../testdata/hetero/gpt-34.json")
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, old := modelSchedule(t)
	tl, _ := Parse([]byte(`{"changes": [{"at": 1, "leave": [0]}]}`))
	if _, err := Run(context.Background(), old, tl, c, Options{Model: other}); err == nil {
		t.Errorf("gpt-34 against chain-12's schedule: no error")
	}
	if _, err := Run(context.Background(), old, tl, c, Options{Model: g}); err != nil {
		t.Errorf("chain-12: %v", err)
	}
}
