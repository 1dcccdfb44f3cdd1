package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// The paper's search with transfer times (SolverOnly, so that the solver
// answers every case): the repetend encoders, the warmup and cooldown
// problems, Assemble and, for N below N_R, the time-optimal fallback all
// read the rule from the placement, so the schedule passes the verifier,
// which reads it too. An encoder that dropped the transfer would make
// Assemble's verification fail. The default search, with constructions
// and refinement, is checked on the same placements too.
func TestSearchWithTransfers(t *testing.T) {
	cases := []struct {
		name   string
		memory int
		nr     int
		n      int
	}{
		{"v-shape", 4, 4, 12},
		{"v-shape", 4, 4, 2}, // N < N_R: the time-optimal fallback
		{"k-shape", 4, 3, 8},
		{"m-shape", 6, 3, 8},
	}
	for _, tc := range cases {
		for _, c := range []int{1, 3} {
			for _, m := range []repetend.Strategy{repetend.StrategyJoint, repetend.StrategyEnumerate} {
				t.Run(fmt.Sprintf("%s/N=%d/transfer=%d/%s", tc.name, tc.n, c, m), func(t *testing.T) {
					p := placementtest.WithTransfers(placementtest.Builtin(t, tc.name, placement.Options{Devices: 4}), c, false)
					res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.memory}, Options{MaxNR: tc.nr, Strategy: m, Jobs: 1, SolverOnly: m == repetend.StrategyEnumerate})
					if err != nil {
						t.Fatal(err)
					}
					if res.Schedule.Placement.Transfers == nil {
						t.Fatal("the schedule's placement lost its transfers")
					}
					if err := verify.Schedule(res.Schedule); err != nil {
						t.Fatal(err)
					}
					mk, lb := schedule.Makespan(res.Schedule), rules.LowerBounds(spec.New(p, tc.n)).Makespan
					if mk < lb {
						t.Errorf("makespan %d below the lower bound %d", mk, lb)
					}
				})
			}
		}
	}
}
