package schedule

import (
	"fmt"
	"slices"
)

// FindRepetend looks for the longest stretch of s that repeats exactly:
// a period P and, for every block i, a micro-batch n_i from which
// B_i^{n_i+k} starts at start(B_i^{n_i}) + k·P for k < Iterations, the
// iteration k starting within [T + k·P, T + (k+1)·P) for one time T. It
// returns nil when no stretch of at least two iterations exists. The
// schedule must be valid; the result passes Verify's repetend check by
// construction (callers attach it and verify as usual).
//
// A schedule built without a repetend (a list schedule, a baseline) often
// has one in its steady state; naming it lets renderings mark it and
// readers see the period the schedule reaches.
func FindRepetend(s *Schedule) *Repetend {
	st := Steady(s)
	if st == nil {
		return nil
	}
	return st.Main.repetend(s)
}

// repetend is the stretch as a Repetend of s, where it is one: one
// micro-batch per window and every block in it (nil otherwise).
func (st Stretch) repetend(s *Schedule) *Repetend {
	k := len(s.Placement.Blocks)
	if st.PerPeriod != 1 || len(st.Blocks) != k {
		return nil
	}
	offsets := make([]int, k)
	seen := make([]bool, k)
	for _, in := range s.Instances {
		if in.Start >= st.Start && in.Start < st.Start+st.Period {
			if seen[in.Block] {
				return nil
			}
			offsets[in.Block], seen[in.Block] = in.Micro, true
		}
	}
	nr := 0
	for _, o := range offsets {
		nr = max(nr, o+1)
	}
	return &Repetend{NR: nr, Period: st.Period, Offsets: offsets, Start: st.Start, Iterations: st.Iterations}
}

// Span is the number of micro-batches of one iteration: the largest
// offset less the least, plus one. It is the N_R a reader counts in the
// window; NR, the bound of the offsets, is larger where the schedule's
// first micro-batches run before the iterations.
func (r *Repetend) Span() int {
	if r == nil || len(r.Offsets) == 0 {
		return 0
	}
	return slices.Max(r.Offsets) - slices.Min(r.Offsets) + 1
}

// Resize is s with n micro-batches instead of s.MicroBatches: iterations
// of its repetend r (FindRepetend's) inserted after the first (n larger)
// or removed after it (n smaller, keeping at least two), every instance
// after them moved by the iterations' time and micro-batches. Where r
// repeats exactly, so does the result — the same warmup, more or fewer
// iterations, the same cooldown — and it is verified here: an error says
// that it does not hold (or that s has decisions, pairs or a link order,
// which Resize does not carry). A search improves the ends of a long
// schedule on a short one this way, and back.
func Resize(s *Schedule, r *Repetend, n int) (*Schedule, error) {
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
	var ins []Instance
	for _, in := range s.Instances {
		switch {
		case in.Start < cut:
			ins = append(ins, in)
			if k > 0 && in.Start >= r.Start {
				for j := 1; j <= k; j++ {
					ins = append(ins, Instance{Block: in.Block, Micro: in.Micro + j, Start: in.Start + j*r.Period})
				}
			}
		case k < 0 && in.Start < cut-shift:
			// in a removed iteration
		default:
			ins = append(ins, Instance{Block: in.Block, Micro: in.Micro + k, Start: in.Start + shift})
		}
	}
	out := &Schedule{Spec: s.Spec.WithMicroBatches(n), Instances: ins}
	if err := Verify(out); err != nil {
		return nil, fmt.Errorf("schedule: resize to %d micro-batches: %w", n, err)
	}
	return out, nil
}
