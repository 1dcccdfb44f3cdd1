package schedule

import (
	"slices"
)

// FindRepetend looks for the longest stretch of s that repeats exactly:
// a period P and, for every block i, a micro-batch n_i from which
// B_i^{n_i+k} starts at start(B_i^{n_i}) + k·P for k < Iterations, the
// iteration k starting within [T + k·P, T + (k+1)·P) for one time T. It
// returns nil when no stretch of at least two iterations exists. The
// schedule must be valid; the result passes verify.Schedule's repetend check by
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
