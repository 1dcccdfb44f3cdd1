package compact

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// latencyOrders is compact under sp's latency budget (0: none, then it
// is compact): the earliest start times that keep the device orders and
// the dependencies and meet the budget in every micro-batch (placement's
// "Latency": the sink of micro-batch n ends at most budget after its
// source starts). The latency rule (rule/latency's Constrain) adds an
// edge from every sink back to every source of its micro-batch, weighted
// t_sink − budget, so the starts are the longest paths of a graph with
// negative edges: the system's relaxation, in the order Compact's starts
// give (a topological order of the other edges). When the orders admit
// no schedule within the budget (a cycle of positive weight) it is an
// error. With links that carry one transfer at a time (Channels) see
// compactLatencyLinks. A micro-batch is delayed only as much as its
// budget asks: its first blocks start later, so that it finishes within
// the budget.
func latencyOrders(sp spec.Spec, orders [][]schedule.Ref) ([]schedule.Instance, error) {
	p, n, budget := sp.Placement, sp.MicroBatches, sp.Latency
	g, err := newGraph(p, n, orders, nil)
	if err != nil {
		return nil, err
	}
	// The rules' constraints without the budget (sp's placement may
	// queue its links: then a visit of the topological pass).
	free := sp
	free.Latency = 0
	hint, err := g.solve(free, nil, nil)
	if err != nil {
		return nil, err
	}
	// The instances stay in the order of these starts (file order
	// without the budget); only their starts move.
	ins := g.instances(hint)
	if budget <= 0 {
		return ins, nil
	}
	if links.Queued(p) {
		return compactLatencyLinks(p, n, orders, budget, ins)
	}
	// The rules' constraints under the budget: the latency rule's edges
	// back from every sink to the sources of its micro-batch
	// (latency.Rule's Constrain); the others add nothing here (no release
	// times, no decisions, and a visit serves the topological pass only).
	if err := constrain(&rule.Retiming{Spec: sp, Var: g.node, Sys: &g.sys}); err != nil {
		return nil, err
	}
	// Compact's starts are the least solution without the budget: as the
	// hint, they order the relaxation so that one round settles every
	// path of device orders and dependencies (each edge goes forward in
	// them, by a block's time at least), and each round after settles one
	// more latency edge of a longest path. A longest path uses each
	// latency edge at most once: more rounds than there are such edges
	// mean a cycle of positive weight. Being the least solution of fewer
	// constraints, they are also floors of this one's, which spares the
	// rounds a start from 0 would take to find them again.
	g.sys.Hint, g.sys.Floor = hint, hint
	g.sys.Rounds = n*len(p.LatencyPairs()) + 2
	start, err := g.sys.Relax()
	if err != nil {
		return nil, fmt.Errorf("compact: these device orders meet no latency budget %d", budget)
	}
	for x := range ins {
		ins[x].Start = start[g.node(ins[x].Ref())]
	}
	return ins, nil
}

// compactLatencyLinks is latencyOrders with links that carry one
// transfer at a time (placement's Channels), from ins, Compact's
// instances. The device orders fix the order of the transfers on every
// link (its producers all run on the link's first device, and the queue
// takes them in their start order: placement's LinkQueue), so each
// transfer is an event of its own: it starts at the later of its
// producer's end and the end of the transfer before it on its link, and
// its consumer starts after it ends. Every such rule only moves an
// instance later when another moves later (where a pair has several
// links, Lanes, the tensor takes the one where it ends first: a least of
// such rules, as monotone). So the earliest starts under the budget are
// the least fixed point of: Compact with a release per instance (its
// earliest start), each source's release raised to its sink's end minus
// the budget, until nothing moves. Each pass is one compaction, exact for
// the releases it is given.
//
// Termination. Where the least fixed point exists, every start is a
// longest path of the constraints with every least (Lanes) fixed to the
// link it takes, a path with no cycle: at most B, the sum of every block
// time and every transfer time (the latency edges weigh t_sink − budget
// ≤ 0, the budget being at least the critical path). A pass that moves
// raises some start by at least 1 and never lowers one, so a start past B
// means there is none: these device orders meet no schedule within the
// budget (an error). Without Lanes the constraints are difference
// constraints, and, as in latencyOrders, n·|pairs|+1 passes find every
// longest path; more mean a cycle of positive weight.
func compactLatencyLinks(p *placement.Placement, n int, orders [][]schedule.Ref, budget int, ins []schedule.Instance) ([]schedule.Instance, error) {
	k := len(p.Blocks)
	node := func(r schedule.Ref) int { return r.Block*n + r.Micro } // compact's numbering
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
	release := make([]int, k*n)
	start := make([]int, k*n)
	for pass := 0; ; pass++ {
		for _, in := range ins {
			start[node(in.Ref())] = in.Start
		}
		moved := false
		for m := range n {
			for _, lp := range pairs {
				src, snk := node(schedule.Ref{Block: lp.Source, Micro: m}), node(schedule.Ref{Block: lp.Sink, Micro: m})
				if need := start[snk] + p.Blocks[lp.Sink].Time - budget; need > start[src] && need > release[src] {
					release[src], moved = need, true
				}
			}
		}
		if !moved {
			return ins, nil
		}
		if slices.Max(start) > limit || (len(p.Lanes) == 0 && pass > n*len(pairs)) {
			return nil, fmt.Errorf("compact: these device orders meet no latency budget %d on links that carry one transfer at a time", budget)
		}
		var err error
		if ins, err = compact(p, n, orders, nil, release); err != nil {
			return nil, err
		}
	}
}

// decisionsLatency is decisions under a latency budget (0:
// none, then it is decisions): s's orders kept (of instances and
// recomputes on every device, of moves on every host channel, of memory
// changes on every device), every start as early as they, the
// dependencies, the decisions' timing and the budget allow. The latency
// rule joins the difference constraints as an edge from every sink back
// to every source of its micro-batch, weighted t_sink − budget (a
// micro-batch's latency counts its blocks: its offloads, reloads and
// recomputes all lie between its forward's end and its consumer's
// start), and the relaxation finds the least solution or, where a cycle
// of positive weight makes these orders meet no schedule within the
// budget, an error. Keeping the orders keeps memory as decisions
// does. Without decisions it is latencyOrders of s's orders. s must
// verify without its budget; placements whose links carry one transfer at
// a time are not compacted with decisions (an error). The result records
// the budget and is verified.
func decisionsLatency(s *schedule.Schedule, budget int) (*schedule.Schedule, error) {
	if budget <= 0 {
		return decisions(s)
	}
	free := *s
	free.Latency = 0
	if err := verify.Schedule(&free); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	p := s.Placement
	out := &schedule.Schedule{Spec: spec.Spec{Placement: p, Cluster: s.Cluster, Given: s.Given, MicroBatches: s.MicroBatches, Memory: s.Memory, Latency: budget}}
	if len(s.Decisions) == 0 {
		ins, err := latencyOrders(out.Spec, schedule.Orders(s))
		if err != nil {
			return nil, err
		}
		out.Instances = ins
	} else {
		if links.Queued(p) {
			return nil, fmt.Errorf("compact: a schedule that offloads or recomputes on links that carry one transfer at a time")
		}
		c := newCompactor(&free)
		// The rules' constraints: the decisions' timing and the host
		// channels' orders (rule/hostchan), the latency rule's edges back
		// from every sink to the sources of its micro-batch.
		if err := constrain(c.retiming(out.Spec)); err != nil {
			return nil, err
		}
		if err := c.solve(); err != nil {
			return nil, fmt.Errorf("compact: these orders meet no latency budget %d", budget)
		}
		out.Instances, out.Decisions = c.result()
		out.Sort()
	}
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("compact: the compacted schedule fails verification (a bug): %w", err)
	}
	return out, nil
}
