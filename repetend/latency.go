package repetend

import (
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
)

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
// both. The warmup and the cooldown hold the micro-batches that cross
// into the iterations: the search re-times the assembled schedule under
// the budget (compact.Compact) and keeps it only where it meets
// it.

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

// latencyDeadlines are the latency rule of budget for fixed offsets (nil
// without a budget).
func latencyDeadlines(p *placement.Placement, offsets []int, budget int) []smt.Deadline {
	if budget <= 0 {
		return nil
	}
	var out []smt.Deadline
	for _, lp := range p.LatencyPairs() {
		out = append(out, smt.Deadline{From: lp.Source, To: lp.Sink, Max: budget, Periods: offsets[lp.Sink] - offsets[lp.Source]})
	}
	return out
}

// assertLatency asserts the latency rule of ps.latency for offsets (in
// the current scope).
func (ps *periodSolver) assertLatency(p *placement.Placement, offsets []int) error {
	return ps.e.AssertDeadlines(latencyDeadlines(p, offsets, ps.latency))
}

// assertLatency asserts the latency rule of budget (0: none) at period P
// with the offsets as variables.
func (j *jointSolver) assertLatency(budget, period int) error {
	if budget <= 0 {
		return nil
	}
	x, e := j.x, j.e
	for _, lp := range j.p.LatencyPairs() {
		delta := x.Sub(j.offsets[lp.Sink], j.offsets[lp.Source])
		end := x.Plus(e.Start[lp.Sink], j.p.Blocks[lp.Sink].Time)
		j.s.Assert(x.Le(end, x.Add(x.Plus(e.Start[lp.Source], budget), x.Scale(period, delta))))
	}
	return x.Err()
}
