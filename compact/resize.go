package compact

import (
	"fmt"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// Resize is s with n micro-batches instead of s.MicroBatches: iterations
// of its repetend r (FindRepetend's) inserted after the first (n larger)
// or removed after it (n smaller, keeping at least two), every instance
// after them moved by the iterations' time and micro-batches. Where r
// repeats exactly, so does the result — the same warmup, more or fewer
// iterations, the same cooldown — and it is verified here: an error says
// that it does not hold (or that s has decisions, pairs or a link order,
// which Resize does not carry). A search improves the ends of a long
// schedule on a short one this way, and back.
func Resize(s *schedule.Schedule, r *schedule.Repetend, n int) (*schedule.Schedule, error) {
	k := n - s.MicroBatches
	switch {
	case r == nil || r.Period < 1 || r.Iterations < 1:
		return nil, fmt.Errorf("schedule: resize: no repetend")
	case len(s.Decisions) > 0 || len(s.Pairs) > 0 || s.LinkOrder != nil:
		return nil, fmt.Errorf("schedule: resize: decisions, pairs and link orders are not carried")
	case n < 1 || (k < 0 && r.Iterations+k < 2):
		return nil, fmt.Errorf("schedule: resize to %d micro-batches: the repetend has %d iterations", n, r.Iterations)
	}
	cut := r.Start + r.Period // the end of the first iteration
	shift := k * r.Period
	var ins []schedule.Instance
	for _, in := range s.Instances {
		switch {
		case in.Start < cut:
			ins = append(ins, in)
			if k > 0 && in.Start >= r.Start {
				for j := 1; j <= k; j++ {
					ins = append(ins, schedule.Instance{Block: in.Block, Micro: in.Micro + j, Start: in.Start + j*r.Period})
				}
			}
		case k < 0 && in.Start < cut-shift:
			// in a removed iteration
		default:
			ins = append(ins, schedule.Instance{Block: in.Block, Micro: in.Micro + k, Start: in.Start + shift})
		}
	}
	out := &schedule.Schedule{Spec: s.Spec.WithMicroBatches(n), Instances: ins}
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("schedule: resize to %d micro-batches: %w", n, err)
	}
	return out, nil
}
