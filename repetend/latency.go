package repetend

import "github.com/tessel-pp/tessel/placement"

// Latency in a repetend's steady state (placement's "Latency"): micro-batch
// m runs block i at s_i + (m − n_i)·P, so its latency is the same for
// every m,
//
//	max_j (s_j − n_j·P + t_j) − min_i (s_i − n_i·P),
//
// and the rule's pair (source i, sink j) is the cross-iteration
// constraint s_j + t_j ≤ s_i + L + (n_j − n_i)·P: with the offsets fixed,
// a deadline with n_j − n_i periods (smt.Deadline); in the joint search,
// where the offsets are variables and P is fixed, a linear constraint on
// both (encode's Periodic and Joint assert them). The warmup and the
// cooldown hold the micro-batches that cross into the iterations: the
// search re-times the assembled schedule under the budget
// (compact.Compact) and keeps it only where it meets it.

// Latency is r's steady-state latency on p.
func (r *Repetend) Latency(p *placement.Placement) int {
	first, last := 0, 0
	for i, b := range p.Blocks {
		s := r.Starts[i] - r.Offsets[i]*r.Period
		if i == 0 || s < first {
			first = s
		}
		if e := s + b.Time; i == 0 || e > last {
			last = e
		}
	}
	return last - first
}
