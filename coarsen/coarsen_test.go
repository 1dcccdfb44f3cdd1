package coarsen_test

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/coarsen"
	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// She et al. §IV, Algorithm 1: the 200-operator graph of §V-B coarsened
// to the target; every block in exactly one coarse block, the coarse graph
// acyclic, each coarse block's time the sum of its members'.
func TestCoarsen(t *testing.T) {
	for _, tc := range []struct {
		nodes, devices, target int
	}{
		{200, 2, 40}, {200, 2, 100}, {200, 4, 10}, {30, 2, 40}, {60, 3, 1},
	} {
		p := placementtest.DAG(t, tc.nodes, tc.devices)
		c, err := coarsen.Coarsen(p, coarsen.Options{Target: tc.target, Unit: -1})
		if err != nil {
			t.Fatal(err)
		}
		want := min(tc.nodes, tc.target)
		if got := len(c.Placement.Blocks); got != want {
			t.Fatalf("%+v: %d coarse blocks, want %d", tc, got, want)
		}
		if _, ok := c.Placement.Topo(); !ok {
			t.Fatalf("%+v: the coarse graph has a cycle", tc)
		}
		seen := make([]int, tc.nodes)
		for cb, ms := range c.Members {
			sum := 0
			for _, i := range ms {
				seen[i]++
				sum += p.Blocks[i].Time
				if c.Of[i] != cb {
					t.Fatalf("%+v: Of[%d] = %d, want %d", tc, i, c.Of[i], cb)
				}
			}
			if c.Placement.Blocks[cb].Time != sum {
				t.Fatalf("%+v: coarse block %d takes %d, its members %d", tc, cb, c.Placement.Blocks[cb].Time, sum)
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("%+v: block %d in %d coarse blocks", tc, i, n)
			}
		}
	}
	if _, err := coarsen.Coarsen(placementtest.DAG(t, 10, 2), coarsen.Options{}); err == nil {
		t.Fatal("target 0: no error")
	}
}

// §IV then §V-B: coarsen to 40, plan the coarse graph (here with HEFT, the
// solver-free planner), expand and re-time: a verified schedule of the 200
// operators within 0.6 of the one-chip time.
func TestPlanExpands(t *testing.T) {
	p := placementtest.DAG(t, 200, 2)
	s, r, err := coarsen.Plan(context.Background(), p, coarsen.Options{Target: coarsen.DefaultTarget}, func(_ context.Context, cp *placement.Placement) (*schedule.Schedule, error) {
		h, err := heft.Run(cp, heft.Options{})
		if err != nil {
			return nil, err
		}
		return h.Schedule, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, b := range p.Blocks {
		sum += b.Time
	}
	if r.Coarse != 40 || r.Blocks != 200 || r.Makespan != schedule.Makespan(s) {
		t.Fatalf("report %+v", r)
	}
	if float64(r.Makespan) > 0.6*float64(sum) {
		t.Fatalf("makespan %d > 0.6 × %d", r.Makespan, sum)
	}
	if len(s.Placement.Blocks) != 200 || s.Placement.Open() {
		t.Fatal("the expanded schedule is not of the chosen original placement")
	}
}
