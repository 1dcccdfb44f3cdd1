package compact

import (
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/rules"
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
// error. A rule whose waits depend on the times (rule.Settler: links that
// carry one transfer at a time) iterates the compaction instead, until
// the times settle (settle). A micro-batch is delayed only as much as its
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
	if budget <= 0 {
		return g.instances(hint), nil
	}
	settled, err := settle(sp, orders, g, hint)
	if err != nil {
		return nil, err
	}
	if settled != nil {
		return g.instances(settled), nil
	}
	// The instances stay in the order of these starts (file order
	// without the budget); only their starts move.
	ins := g.instances(hint)
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

// settle asks the rules whose waits depend on the times (rule.Settler,
// in the list's order) for the least starts under sp's budget, from
// hint, the least starts of g without it: the first that answers gives
// them; nil where none does. Each of its passes is a compaction of the
// orders afresh (a rule's visit books its queues from empty) with
// release times, the budget left out.
func settle(sp spec.Spec, orders [][]schedule.Ref, g *graph, hint []int) ([]int, error) {
	free := sp
	free.Latency = 0
	var solveErr error
	st := &rule.Settling{Spec: sp, Var: g.node, Start: hint, Solve: func(release []int) ([]int, error) {
		g, err := newGraph(sp.Placement, sp.MicroBatches, orders, nil)
		if err == nil {
			var start []int
			if start, err = g.solve(free, nil, release); err == nil {
				return start, nil
			}
		}
		solveErr = err
		return nil, err
	}}
	for _, r := range rules.All() {
		s, ok := r.(rule.Settler)
		if !ok {
			continue
		}
		start, err := s.Settle(st)
		switch {
		case err != nil && errors.Is(err, solveErr):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("compact: %w", err)
		case start != nil:
			return start, nil
		}
	}
	return nil, nil
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
		if err := refuse(&rule.Retiming{Spec: out.Spec, From: &free}); err != nil {
			return nil, err
		}
		// The rules' constraints: the decisions' variables and timing and
		// the host channels' orders (rule/hostchan), the memory orders
		// (rule/memory), the latency rule's edges back from every sink to
		// the sources of its micro-batch.
		c, err := newCompactor(&free, out.Spec)
		if err != nil {
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
