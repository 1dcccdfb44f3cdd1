package baseline

import (
	"errors"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// # Baselines carried from a window of micro-batches
//
// A baseline's rule runs every micro-batch of its steady phase the same
// way, so its schedule of N micro-batches repeats by micro-batch between
// its fill and its drain. Building it at N costs a compaction and a
// verification that follow N (seconds at N = 10,000 for the baselines
// that decide); built on a window of w micro-batches and extended
// periodically (schedule.ExtendPeriodic) it costs the window's build and
// one verification at N.

// BuildCarried is m's schedule of sp: built on w micro-batches and
// extended periodically to sp.MicroBatches where the window's schedule
// repeats by micro-batch (schedule.FindPeriodicity) and N − w is a
// multiple of its micro-batches per period, the extension passing
// verify.Schedule; built on all N micro-batches otherwise (w ≤ 0 or
// w ≥ N, a rule not applicable or stuck on the window, no periodic
// stretch, an extension that fails verification).
//
// A window whose schedule is over the budget answers for N, with no
// schedule and the window's error (wrapping ErrOverBudget): a
// baseline's fixed rule holds at least as many activations with more
// micro-batches (its fill is the window's), so its peak does not fall
// as N grows.
func BuildCarried(m Baseline, sp spec.Spec, w int) (*schedule.Schedule, error) {
	n := sp.MicroBatches
	if w <= 0 || w >= n {
		return m.Build(sp)
	}
	s, err := m.Build(sp.WithMicroBatches(w))
	switch {
	case errors.Is(err, ErrOverBudget):
		return nil, err
	case err != nil:
		return m.Build(sp)
	}
	if e := extend(s, n); e != nil {
		return e, nil
	}
	return m.Build(sp)
}

// extend is s carried periodically to n micro-batches and verified, nil
// where it does not repeat or the extension fails verification.
func extend(s *schedule.Schedule, n int) *schedule.Schedule {
	per, ok := schedule.FindPeriodicity(s)
	if !ok || (n-s.MicroBatches)%per.PerPeriod != 0 {
		return nil
	}
	e, err := schedule.ExtendPeriodic(s, per, n)
	if err != nil || verify.Schedule(e) != nil {
		return nil
	}
	return e
}
