package search

import (
	"context"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
)

// SteadyMicroBatches is the N for which SteadyRepetend checks that a
// repetend's warmup and cooldown exist: the rates it reports hold as N
// grows, and N matters to the cooldown only where a micro-batch leaves
// memory behind (never on the built-in placements).
const SteadyMicroBatches = 128

// SteadyOptions configure SteadyRepetend.
type SteadyOptions struct {
	Memory int // per-device budget; 0 means unlimited
	MaxNR  int // largest N_R tried; 0: from the budget
	Seed   int // random seed of the solver
	Jobs   int // solver workers (repetend.Options.Jobs; 0: one per core)
	// Latency is a latency budget (placement's "Latency"; 0: none): the
	// repetend's cross-iteration latency rule (repetend.Options.Latency),
	// so that its steady state meets it.
	Latency int
}

// SteadyRepetend is the repetend of least period with N_R ≤ MaxNR under
// the budget whose warmup and cooldown exist (Feasible, for
// SteadyMicroBatches): the repetend whose bubble rate a schedule reaches
// as N grows, which the paper's Table II and Fig. 11 and 12 report. The
// result's Best is nil when no repetend fits; Proven says whether the
// search ran to its end.
func SteadyRepetend(ctx context.Context, p *placement.Placement, opt SteadyOptions) (*repetend.Result, error) {
	return repetend.Search(ctx, p, repetend.Options{
		Memory: opt.Memory, MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed, Jobs: opt.Jobs, Latency: opt.Latency,
		Accept: func(ctx context.Context, nr int, offsets []int) (bool, error) {
			return Feasible(ctx, p, repetend.Assignment{NR: nr, Offsets: offsets},
				repetend.PeriodOptions{Memory: opt.Memory, MicroBatches: SteadyMicroBatches})
		},
	})
}
