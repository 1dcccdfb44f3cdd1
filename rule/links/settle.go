package links

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
)

var _ rule.Settler = Rule{}

// Settle is a compaction of device orders under a latency budget on
// links that carry one transfer at a time (rule.Settler). The device
// orders fix the order of the transfers on every link (its producers all
// run on the link's first device, and the queue takes them in their
// start order: placement's LinkQueue), so each transfer is an event of
// its own: it starts at the later of its producer's end and the end of
// the transfer before it on its link, and its consumer starts after it
// ends. Every such rule only moves an instance later when another moves
// later (where a pair has several links, Lanes, the tensor takes the one
// where it ends first: a least of such rules, as monotone). So the
// earliest starts under the budget are the least fixed point of: the
// compaction with a release per instance (its earliest start), each
// source's release raised to its sink's end minus the budget, until
// nothing moves. Each pass is one compaction (s.Solve), exact for the
// releases it is given.
//
// Termination. Where the least fixed point exists, every start is a
// longest path of the constraints with every least (Lanes) fixed to the
// link it takes, a path with no cycle: at most B, the sum of every block
// time and every transfer time (the latency edges weigh t_sink − budget
// ≤ 0, the budget being at least the critical path). A pass that moves
// raises some start by at least 1 and never lowers one, so a start past B
// means there is none: these device orders meet no schedule within the
// budget (an error). Without Lanes the constraints are difference
// constraints, and, as in the relaxation (rule/latency's edges),
// n·|pairs|+1 passes find every longest path; more mean a cycle of
// positive weight.
func (Rule) Settle(s *rule.Settling) ([]int, error) {
	p, n, budget := s.Spec.Placement, s.Spec.MicroBatches, s.Spec.Latency
	if !Queued(p) || budget <= 0 {
		return nil, nil
	}
	limit := 0
	for _, b := range p.Blocks {
		limit += b.Time
	}
	for _, d := range p.Deps {
		t := p.Transfer(d)
		for _, lt := range p.Lanes[d] {
			t = max(t, lt)
		}
		limit += t * len(p.Links(d))
	}
	limit *= n
	pairs := p.LatencyPairs()
	release := make([]int, len(s.Start))
	start := s.Start
	for pass := 0; ; pass++ {
		moved := false
		for m := range n {
			for _, lp := range pairs {
				src, snk := s.Var(schedule.Ref{Block: lp.Source, Micro: m}), s.Var(schedule.Ref{Block: lp.Sink, Micro: m})
				if need := start[snk] + p.Blocks[lp.Sink].Time - budget; need > start[src] && need > release[src] {
					release[src], moved = need, true
				}
			}
		}
		if !moved {
			return start, nil
		}
		if slices.Max(start) > limit || (len(p.Lanes) == 0 && pass > n*len(pairs)) {
			return nil, fmt.Errorf("these device orders meet no latency budget %d on links that carry one transfer at a time", budget)
		}
		var err error
		if start, err = s.Solve(release); err != nil {
			return nil, err
		}
	}
}
