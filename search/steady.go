package search

import (
	"context"

	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/spec"
)

// SteadyMicroBatches is the N for which SteadyRepetend checks that a
// repetend's warmup and cooldown exist: the rates it reports hold as N
// grows, and N matters to the cooldown only where a micro-batch leaves
// memory behind (never on the built-in placements).
const SteadyMicroBatches = 128

// SteadyOptions are SteadyRepetend's effort; the problem is its spec.
type SteadyOptions struct {
	MaxNR int // largest N_R tried; 0: from the budget
	Seed  int // random seed of the solver
	Jobs  int // solver workers (repetend.Options.Jobs; 0: one per core)
}

// SteadyRepetend is the repetend of sp's placement of least period with
// N_R ≤ MaxNR under sp's memory budget whose warmup and cooldown exist
// (Feasible, for SteadyMicroBatches, whatever sp's micro-batches), its
// steady state within sp's latency budget (the repetend's
// cross-iteration latency rule): the repetend whose bubble rate a
// schedule reaches as N grows, which the paper's Table II and Fig. 11
// and 12 report. The result's Best is nil when no repetend fits; Proven
// says whether the search ran to its end.
func SteadyRepetend(ctx context.Context, sp spec.Spec, opt SteadyOptions) (*repetend.Result, error) {
	steady := spec.Spec{Placement: sp.Placement, Memory: sp.Memory, Latency: sp.Latency}
	return repetend.Search(ctx, steady, repetend.Options{
		MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed, Jobs: opt.Jobs,
		Accept: func(ctx context.Context, nr int, offsets []int) (bool, error) {
			return Feasible(ctx, steady.WithMicroBatches(SteadyMicroBatches), repetend.Assignment{NR: nr, Offsets: offsets})
		},
	})
}
