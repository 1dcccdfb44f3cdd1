package encode

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Per-device budgets reduce exactly to the Problem's one budget with
// shifted entries (BudgetShift): the time-optimal schedule under
// capacities is the one under a uniform budget wherever the binding
// device's budget is that uniform one, a device without a budget never
// binds, and every answer verifies against each device's own budget.
func TestPerDeviceBudgets(t *testing.T) {
	const n = 4
	base := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3})
	optimal := func(p *placement.Placement, memory int) int {
		t.Helper()
		s, sol, err := Optimal(context.Background(), p, n, memory, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !sol.Proven {
			t.Fatal("not proven")
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("capacities %v memory %d: %v", p.Capacities, memory, err)
		}
		return schedule.Makespan(s)
	}
	if optimal(base, 1) <= optimal(base, 0) {
		t.Fatal("a budget of 1 does not bind: the test shows nothing")
	}
	// In 1F1B device 0 holds the most activations: its budget binds.
	for _, m := range []int{1, 2} {
		p := base.Clone()
		p.Capacities = []int{m, 0, 0}
		if got, want := optimal(p, 0), optimal(base, m); got != want {
			t.Errorf("device 0 of capacity %d, others unlimited: makespan %d, want the uniform budget's %d", m, got, want)
		}
		if budget, shift := BudgetShift(spec.Spec{Placement: p}); budget != m || shift[0] != 0 || shift[1] != -unbounded {
			t.Errorf("shift of capacities %v: %d %v", p.Capacities, budget, shift)
		}
	}
	// The last device needs 1 whatever the schedule: capping it at 1
	// costs nothing.
	p := base.Clone()
	p.Capacities = []int{0, 0, 1}
	if got, want := optimal(p, 0), optimal(base, 0); got != want {
		t.Errorf("last device capped at 1: makespan %d, want the unlimited %d", got, want)
	}
	// Uniform budgets keep the Problem as it always was.
	if budget, shift := BudgetShift(spec.Spec{Placement: base, Memory: 3}); budget != 3 || shift != nil {
		t.Errorf("uniform: %d %v", budget, shift)
	}
}
