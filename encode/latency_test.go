package encode

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// TestMinimizeMakespanDeadlines: the time-optimal encoding (the Tessel
// paper's §III-B) with the latency rule of its §VI-D. Two micro-batches of
// a chain a (time 1) → b (time 2) on one device end at 6 whatever the
// order; with budget 3 each micro-batch must run back to back (a0 a1 b0
// b1 gives micro-batch 1 latency 5), and Feasible rejects the other
// order.
func TestMinimizeMakespanDeadlines(t *testing.T) {
	p := &placement.Placement{Name: "ab", Devices: 1, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
		{ID: "b", Kind: placement.Forward, Devices: []int{0}, Time: 2},
	}, Deps: []placement.Dep{{From: 0, To: 1}}}
	refs := AllInstances(spec.New(p, 2))
	for _, tc := range []struct {
		budget, makespan int
	}{{0, 6}, {3, 6}} {
		pr := InstanceProblem(spec.Spec{Placement: p}, refs, nil)
		pr.Deadlines = LatencyDeadlines(spec.Spec{Placement: p, Latency: tc.budget}, refs)
		sol, err := smt.MinimizeMakespan(context.Background(), pr, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sol.Makespan != tc.makespan || !sol.Proven {
			t.Errorf("budget %d: makespan %d proven %v, want %d", tc.budget, sol.Makespan, sol.Proven, tc.makespan)
		}
		if tc.budget > 0 {
			for m := range 2 {
				a, b := sol.Starts[2*m], sol.Starts[2*m+1] // AllInstances: micro-batch major
				if refs[2*m].Micro != m || b+2-a > tc.budget {
					t.Errorf("budget %d: micro-batch %d from %d to %d", tc.budget, m, a, b+2)
				}
			}
		}
	}
	// The deadlines are checked by Feasible: a0 a1 b0 b1 breaks budget 3.
	pr := InstanceProblem(spec.Spec{Placement: p}, refs, nil)
	pr.Deadlines = LatencyDeadlines(spec.Spec{Placement: p, Latency: 3}, refs)
	bad := make([]int, 4)
	for k, r := range refs {
		bad[k] = map[[2]int]int{{0, 0}: 0, {0, 1}: 1, {1, 0}: 2, {1, 1}: 4}[[2]int{r.Block, r.Micro}]
	}
	if pr.Feasible(bad) {
		t.Errorf("a0 a1 b0 b1 within budget 3: want infeasible")
	}
}
