package encode

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// OptPipe's model (Qi et al., "OptPipe", Appendix C) decides per instance
// whether to offload: at a budget of one activation per device the
// time-optimal schedule with the decisions is proven, and strictly
// shorter than the time-optimal one that keeps every activation.
func TestOptimalDecisions(t *testing.T) {
	base := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, SplitBackward: true})
	for _, tc := range []struct {
		name string
		p    *placement.Placement
		d    spec.Decisions
		want int
	}{
		{"offload", base.WithOffload(1), spec.Decisions{Offload: true}, 13},
		{"recompute", base.WithRecompute(), spec.Decisions{Recompute: true}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, keep, err := Optimal(context.Background(), tc.p, 3, 1, smt.Options{})
			if err != nil || !keep.Proven {
				t.Fatalf("without decisions: %v, %+v", err, keep)
			}
			s, sol, err := OptimalDecisions(context.Background(), spec.Spec{Placement: tc.p, MicroBatches: 3, Memory: 1, Allowed: tc.d}, nil, smt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := verify.Schedule(s); err != nil {
				t.Fatal(err)
			}
			off, rec := s.Count()
			if !sol.Proven || sol.Makespan != tc.want || schedule.Makespan(s) != tc.want || off+rec == 0 || tc.want >= keep.Makespan {
				t.Errorf("makespan %d (proven %v), %d offloaded, %d recomputed, keeping all %d; want %d proven, with decisions", sol.Makespan, sol.Proven, off, rec, keep.Makespan, tc.want)
			}
		})
	}
}

// The lower bound with decisions (rules.LowerBounds: memory-time, the
// host channel's load, the recomputes' device time) never exceeds a
// proven optimum.
func TestDecisionBoundBelowOptimum(t *testing.T) {
	testskip.Short(t, "several time-optimal searches")
	for _, tc := range []struct {
		opt     placement.Options
		n, m, T int
		d       spec.Decisions
	}{
		{placement.Options{Devices: 2, SplitBackward: true}, 3, 1, 1, spec.Decisions{Offload: true}},
		{placement.Options{Devices: 2, SplitBackward: true}, 3, 1, 2, spec.Decisions{Offload: true}},
		{placement.Options{Devices: 2, SplitBackward: true}, 4, 2, 1, spec.Decisions{Offload: true, Recompute: true}},
		{placement.Options{Devices: 2}, 3, 1, 1, spec.Decisions{Offload: true}},
		{placement.Options{Devices: 2}, 3, 1, 0, spec.Decisions{Recompute: true}},
		{placement.Options{Devices: 3, SplitBackward: true}, 2, 1, 1, spec.Decisions{Offload: true, Recompute: true}},
	} {
		p := placementtest.Builtin(t, "v-shape", tc.opt)
		if tc.d.Offload {
			p = p.WithOffload(tc.T)
		}
		if tc.d.Recompute {
			p = p.WithRecompute()
		}
		s, sol, err := OptimalDecisions(context.Background(), spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.m, Allowed: tc.d}, nil, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.m}).Makespan
		if !sol.Proven || lb > schedule.Makespan(s) {
			t.Errorf("%s, n %d, memory %d, offload time %d, %+v: optimum %d (proven %v), lower bound %d",
				p.Name, tc.n, tc.m, tc.T, tc.d, schedule.Makespan(s), sol.Proven, lb)
		}
	}
}
