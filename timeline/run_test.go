package timeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// A built-in shape is rebuilt on the devices left (Wu et al., S3: a node
// fails and the job goes on with fewer devices).
func TestRepartitionBuiltin(t *testing.T) {
	p := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 8})
	q, desc, err := Repartition(p, cluster.Uniform(4), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4})
	if !q.Equal(want) || desc != "m-shape on 4 devices" {
		t.Errorf("got %q (%s), want m-shape on 4 devices", q.Name, desc)
	}
	q, _, err = Repartition(p, cluster.Uniform(10), 10)
	if err != nil || q.Devices != 10 {
		t.Errorf("join: %v", err)
	}
	z := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	q, _, err = Repartition(z, cluster.Uniform(3), 3)
	if err != nil || !q.Equal(placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3, Chunks: 2, Order: placement.V, SplitBackward: true})) {
		t.Errorf("zero-bubble V: %v", err)
	}
}

// Any other placement is cut again at its old stage boundaries: the old
// devices' blocks, in device order, split into contiguous runs of least
// largest time on the devices left.
func TestRepartitionKeepsStages(t *testing.T) {
	p, err := placement.Load("../testdata/placements/unequal.json")
	if err != nil {
		t.Fatal(err)
	}
	on := func(q *placement.Placement) map[string]int {
		m := map[string]int{}
		for _, b := range q.Blocks {
			m[b.ID] = b.Devices[0]
		}
		return m
	}
	// Loads 3, 6, 4, 5: device 2 leaves; {0}{1}{2,3} (3, 6, 9) is the
	// first least split.
	q, desc, err := Repartition(p, cluster.Uniform(3), 3)
	if err != nil {
		t.Fatal(err)
	}
	if desc != "stages 0, 1, 2-3 on devices 0..2" {
		t.Errorf("description %q", desc)
	}
	if m := on(q); q.Devices != 3 || m["f0"] != 0 || m["b1"] != 1 || m["f2"] != 2 || m["b3"] != 2 {
		t.Errorf("devices %d, blocks on %v", q.Devices, m)
	}
	// The last device at half speed: {0,1}{2}{3} (9, 4, 10).
	c := cluster.Uniform(3)
	c.Devices[2].Speed = 0.5
	q, desc, err = Repartition(p, c, 3)
	if err != nil {
		t.Fatal(err)
	}
	if m := on(q); m["f1"] != 0 || m["f2"] != 1 || m["f3"] != 2 || desc != "stages 0-1, 2, 3 on devices 0..2" {
		t.Errorf("blocks on %v (%s)", m, desc)
	}
	// A group block follows its members' units.
	g := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4})
	g.Name = "not-built-in"
	q, _, err = Repartition(g, cluster.Uniform(2), 2)
	if err != nil {
		t.Fatal(err)
	}
	if b := q.Blocks[0]; len(b.Devices) != 2 {
		t.Errorf("group block %s on %v", b.ID, b.Devices)
	}
	if _, _, err := Repartition(p, cluster.Uniform(5), 5); err == nil || !strings.Contains(err.Error(), "tessel partition") {
		t.Errorf("join to a placement of a model: %v", err)
	}
}

// Run through a timeline: every step's schedule verifies, a change of
// links is a replan from the old orders and repetend, a device leaving a
// placement of fixed stages starts from the old orders moved, and the
// report is the same bytes every time (effort-based).
func TestRun(t *testing.T) {
	ctx := context.Background()
	p, err := placement.Load("../testdata/placements/unequal.json")
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.Uniform(4)
	c.Default = cluster.Link{Latency: 1}
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	old, err := search.Run(ctx, spec.Spec{Placement: q, MicroBatches: 8, Memory: 6}, search.Options{Strategy: repetend.StrategyJoint})
	if err != nil {
		t.Fatal(err)
	}
	s := old.Schedule
	if err := s.SetCluster(c, p); err != nil {
		t.Fatal(err)
	}
	tl, err := Load("../testdata/timelines/link-then-leave.json")
	if err != nil {
		t.Fatal(err)
	}
	run := func() (*Report, []byte) {
		rep, err := Run(ctx, s, tl, nil, Options{Fresh: true, Replan: search.ReplanOptions{Effort: 5000}})
		if err != nil {
			t.Fatal(err)
		}
		for k := range rep.Steps {
			rep.Steps[k].Seconds, rep.Steps[k].FreshSeconds = 0, new(float64)
		}
		b, _ := json.Marshal(rep)
		return rep, b
	}
	rep, b := run()
	if len(rep.Steps) != 5 {
		t.Fatalf("%d steps", len(rep.Steps))
	}
	for k, st := range rep.Steps {
		if !st.Valid || st.Fresh == nil || st.Makespan < st.LowerBound {
			t.Errorf("step %d: %+v", k+1, st)
		}
	}
	if w := rep.Steps[0].Warm; w != WarmReplan {
		t.Errorf("step 1 warm start %q", w)
	}
	if last := rep.Steps[3]; last.Devices != 3 || last.Warm != WarmMoved || last.Repartition == "" {
		t.Errorf("step 4: %+v", last)
	}
	// A device joins: every stage on a device of its own again.
	if last := rep.Steps[4]; last.Devices != 4 || last.Repartition != "stages 0, 1, 2, 3 on devices 0..3" {
		t.Errorf("step 5: %+v", last)
	}
	if rep.Final.Placement.Devices != 4 || rep.Final.Cluster == nil || !rep.Final.Given.Equal(p) || verify.Schedule(rep.Final) != nil {
		t.Errorf("final schedule on %d devices, cluster %v", rep.Final.Placement.Devices, rep.Final.Cluster)
	}
	if _, again := run(); !bytes.Equal(b, again) {
		t.Errorf("two runs differ:\n%s\n%s", b, again)
	}
	// The step where device 2 leaves says how the stages moved.
	leaves := false
	for _, st := range rep.Steps {
		n := len(st.Changes)
		leaves = leaves || n > 0 && strings.HasSuffix(st.Changes[n-1], "device 2 leaves") && st.Repartition == "stages 0-1, 2, 3 on devices 0..2"
	}
	if !leaves {
		t.Errorf("no step where device 2 leaves, stages 0-1, 2, 3 on devices 0..2: %+v", rep.Steps)
	}
	// A device that does not exist there is bad input.
	bad := &Timeline{Changes: []Change{{At: 1, Leave: []int{1}}, {At: 2, Leave: []int{3}}}}
	_, err = Run(ctx, s, bad, nil, Options{})
	var ce *ChangeError
	if !errorsAs(err, &ce) || !strings.Contains(err.Error(), "step 2 (iteration 2): device 3 leaves: leave[0]: device 3 out of range 0..2") {
		t.Errorf("error %v", err)
	}
}

func errorsAs(err error, target **ChangeError) bool { return errors.As(err, target) }
