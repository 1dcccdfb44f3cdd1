package smt

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
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
		d    Decisions
		want int
	}{
		{"offload", base.WithOffload(1), Decisions{Offload: true}, 13},
		{"recompute", base.WithRecompute(), Decisions{Recompute: true}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, keep, err := Optimal(context.Background(), tc.p, 3, 1, Options{})
			if err != nil || !keep.Proven {
				t.Fatalf("without decisions: %v, %+v", err, keep)
			}
			s, sol, err := OptimalDecisions(context.Background(), tc.p, 3, 1, tc.d, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := schedule.Verify(s); err != nil {
				t.Fatal(err)
			}
			off, rec := s.Count()
			if !sol.Proven || sol.Makespan != tc.want || schedule.Makespan(s) != tc.want || off+rec == 0 || tc.want >= keep.Makespan {
				t.Errorf("makespan %d (proven %v), %d offloaded, %d recomputed, keeping all %d; want %d proven, with decisions", sol.Makespan, sol.Proven, off, rec, keep.Makespan, tc.want)
			}
		})
	}
}
