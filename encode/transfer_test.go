package encode

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// InstanceProblem turns the placement's rule into precedences: Lag is
// minus the transfer time, on cross-device dependencies only.
func TestInstanceProblemTransfers(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	// f0 → f1 crosses devices, f1 → b1 stays on device 1, b1 → b0 crosses.
	p.Transfers = map[placement.Dep]int{{From: 0, To: 1}: 2, {From: 2, To: 3}: 5}
	pr := InstanceProblem(spec.Spec{Placement: p}, AllInstances(spec.New(p, 1)), nil)
	want := []smt.Prec{{From: 0, To: 1, Lag: -2}, {From: 1, To: 2}, {From: 2, To: 3, Lag: -5}}
	if fmt.Sprint(pr.Precs) != fmt.Sprint(want) {
		t.Errorf("precedences %v, want %v", pr.Precs, want)
	}
}

// The time-optimal search honours transfers: one micro-batch of 2-device
// v-shape runs its chain with both transfers, 8 + 2c, and a few
// micro-batches give a schedule the verifier accepts, no shorter than the
// bound.
func TestOptimalWithTransfers(t *testing.T) {
	for _, c := range []int{0, 1, 3} {
		for _, n := range []int{1, 3} {
			p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
			if err != nil {
				t.Fatal(err)
			}
			p.Transfers = map[placement.Dep]int{{From: 0, To: 1}: c, {From: 2, To: 3}: c}
			s, sol, err := Optimal(context.Background(), p, n, 2, smt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := verify.Schedule(s); err != nil {
				t.Fatalf("transfer %d, N=%d: %v", c, n, err)
			}
			if !sol.Proven {
				t.Errorf("transfer %d, N=%d: not proven", c, n)
			}
			mk := schedule.Makespan(s)
			if n == 1 && mk != 8+2*c {
				t.Errorf("transfer %d, one micro-batch: makespan %d, want %d", c, mk, 8+2*c)
			}
			if lb := rules.LowerBounds(spec.New(p, n)).Makespan; mk < lb {
				t.Errorf("transfer %d, N=%d: makespan %d below the bound %d", c, n, mk, lb)
			}
		}
	}
}
