package repetend

import (
	"context"
	"errors"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/spec"
)

// Repetend is a solved repetend: iteration k runs B_i^{Offsets[i]+k} at
// Starts[i] + k·Period.
type Repetend struct {
	NR      int
	Offsets []int
	Period  int
	Starts  []int // normalised: the earliest is 0
}

// repetend is the solved iteration it of N_R nr (nil for nil).
func repetend(nr int, it *encode.Iteration) *Repetend {
	if it == nil {
		return nil
	}
	return &Repetend{NR: nr, Offsets: it.Offsets, Period: it.Period, Starts: it.Starts}
}

// newPeriodic encodes the repetend of candidate c on sp's placement
// (encode.NewPeriodic) under sp's budgets, for sp's micro-batches, with
// opt's seed and effort.
func newPeriodic(sp spec.Spec, c Assignment, opt PeriodOptions) (*encode.Periodic, error) {
	return encode.NewPeriodic(sp, c.NR, c.Offsets, encode.RepetendOptions{Seed: opt.Seed, Effort: opt.Effort})
}

// MinimizePeriod finds the least period in [lo, hi] of the candidate's
// repetend under sp's memory and latency budgets by binary search; r is
// nil when no period ≤ hi exists.
func MinimizePeriod(ctx context.Context, sp spec.Spec, c Assignment, lo, hi int, opt PeriodOptions) (r *Repetend, checks int, err error) {
	if lo > hi {
		return nil, 0, nil
	}
	ps, err := newPeriodic(sp, c, opt)
	if err != nil {
		return nil, 0, err
	}
	defer ps.Close()
	it, checks, err := ps.Minimize(ctx, lo, hi)
	return repetend(c.NR, it), checks, err
}

// SolveFixed schedules a candidate's repetend at exactly the given period,
// in a fresh solver: the same inputs always give the same starts, whatever
// search found the period.
func SolveFixed(ctx context.Context, sp spec.Spec, c Assignment, period int, opt PeriodOptions) (*Repetend, error) {
	ps, err := newPeriodic(sp, c, opt)
	if err != nil {
		return nil, err
	}
	defer ps.Close()
	it, err := ps.Fixed(ctx, period)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, errors.New("repetend: no schedule at the period found before (solver disagrees with itself)")
	}
	return repetend(c.NR, it), nil
}
