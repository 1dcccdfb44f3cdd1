package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Links as a resource (docs/design.md, "Links"): with transfers that queue on
// their links, every part of the search answers a schedule the verifier
// accepts under the links' rule — the solver's too (SolverOnly, including
// N < N_R's time-optimal fallback), re-timed where its encoding does not
// see the queues — and the default search never loses to a baseline
// compacted under the same rule. Nothing is claimed proven that the lower
// bound does not prove.
func TestSearchOnQueuedLinks(t *testing.T) {
	cases := []struct {
		name      string
		memory, n int
	}{
		{"v-shape", 8, 12},
		{"v-shape", 8, 2},
		{"x-shape", 8, 8},
		{"m-shape", 6, 8},
		{"nn-shape", 8, 8},
	}
	for _, tc := range cases {
		for _, solverOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/N=%d/solver-only=%v", tc.name, tc.n, solverOnly), func(t *testing.T) {
				p := placementtest.WithTransfers(placementtest.Builtin(t, tc.name, placement.Options{Devices: 4}), 3, true)
				res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.memory}, Options{MaxNR: 4, Jobs: 1, SolverOnly: solverOnly})
				if err != nil {
					t.Fatal(err)
				}
				if !res.Schedule.Placement.QueuedLinks {
					t.Fatal("the schedule's placement lost its channels")
				}
				if err := verify.Schedule(res.Schedule); err != nil {
					t.Fatal(err)
				}
				mk := res.Makespan()
				if mk < res.Bounds.Makespan {
					t.Errorf("makespan %d below the lower bound %d", mk, res.Bounds.Makespan)
				}
				if res.Proven() && mk > res.Bounds.Makespan {
					t.Errorf("claimed proven at %d above the bound %d", mk, res.Bounds.Makespan)
				}
				if solverOnly {
					return
				}
				for _, m := range baseline.All() {
					s, err := m.Build(spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.memory})
					if err != nil {
						continue
					}
					if b := schedule.Makespan(s); mk > b {
						t.Errorf("makespan %d, baseline %s %d", mk, m.Name, b)
					}
				}
			})
		}
	}
}
