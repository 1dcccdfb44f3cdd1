package repetend

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// setTransfers gives every dependency between blocks on different devices
// the transfer time c, as a cluster would.
func setTransfers(p *placement.Placement, c int) *placement.Placement {
	return placementtest.WithTransfers(p, c, false)
}

// checkRule asserts the repetend's form of the dependency rule:
// s_i + t_i + c_ij ≤ s_j + (n_i − n_j)·P for every dependency.
func checkRule(t *testing.T, what string, p *placement.Placement, r *Repetend) {
	t.Helper()
	for _, d := range p.Deps {
		delta := r.Offsets[d.From] - r.Offsets[d.To]
		if r.Starts[d.From]+p.Delay(d) > r.Starts[d.To]+delta*r.Period {
			t.Errorf("%s: %s -> %s: s %d + delay %d > s %d + %d·%d", what, p.Blocks[d.From].ID, p.Blocks[d.To].ID,
				r.Starts[d.From], p.Delay(d), r.Starts[d.To], delta, r.Period)
		}
	}
}

// v-shape on 2 devices is f0 (t1) → f1 (t1) → b1 (t3) → b0 (t3), f1 and b1
// on device 1: transfers sit on f0 → f1 and b1 → b0. With every offset 0
// the bound is one micro-batch alone, 8 + 2c; with 1F1B's offsets the
// cycle f0 → f1 → b1 → b0 → f0 crosses two periods, so 2P ≥ 8 + 2c.
func TestPeriodBoundWithTransfers(t *testing.T) {
	tests := []struct {
		offsets []int
		want    func(c int) int
	}{
		{[]int{0, 0, 0, 0}, func(c int) int { return 8 + 2*c }},
		{[]int{1, 1, 0, 0}, func(c int) int { return 4 + c }},
	}
	for _, tc := range tests {
		for _, c := range []int{0, 1, 3} {
			p := setTransfers(placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2}), c)
			if got, want := PeriodBound(p, tc.offsets), tc.want(c); got != want {
				t.Errorf("offsets %v, transfer %d: PeriodBound = %d, want %d", tc.offsets, c, got, want)
			}
		}
	}
}

// With transfers, the enumeration and the joint search still agree on
// the least period, their repetends obey the rule, and no period is below
// the solver-free bound.
func TestMethodsAgreeWithTransfers(t *testing.T) {
	cases := []struct {
		name   string
		memory int
		nr     int
	}{
		{"v-shape", 0, 3},
		{"k-shape", 3, 3},
		{"m-shape", 0, 3},
	}
	for _, tc := range cases {
		for _, c := range []int{1, 2} {
			p := setTransfers(placementtest.Builtin(t, tc.name, placement.Options{Devices: 2}), c)
			var periods []int
			for _, m := range []Strategy{StrategyEnumerate, StrategyJoint} {
				what := fmt.Sprintf("%s transfer %d %s", tc.name, c, m)
				r, err := Search(context.Background(), spec.Spec{Placement: p, Memory: tc.memory}, Options{MaxNR: tc.nr, Strategy: m, Jobs: 1})
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if r.Best == nil || !r.Proven {
					t.Fatalf("%s: best %v proven %v", what, r.Best, r.Proven)
				}
				checkRule(t, what, p, r.Best)
				if b := PeriodBound(p, r.Best.Offsets); r.Best.Period < b {
					t.Errorf("%s: period %d below the bound %d", what, r.Best.Period, b)
				}
				periods = append(periods, r.Best.Period)
			}
			if periods[0] != periods[1] {
				t.Errorf("%s transfer %d: enumeration finds period %d, joint %d", tc.name, c, periods[0], periods[1])
			}
		}
	}
}
