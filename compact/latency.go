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

// orders is the one compaction of device orders (Compact without a
// schedule kept): the system of keep's orders and pairs (newGraph: a
// variable per instance, a pair's merged by the rules that merge,
// rule.Merger; the device orders and the dependencies) with the rules'
// constraints (rule.Retimer: release times, a link queue's visit),
// solved in one topological pass. Then the rules whose constraints
// depend on the times or point back in time, where sp switches them on:
// a rule.Settler iterates the compaction until its waits settle under a
// latency budget (links that carry one transfer at a time); else the
// rules' constraints back (rule.BackRetimer: the latency budget's edges
// from each sink to the sources of its micro-batch, weighted t_sink −
// budget) make the starts the longest paths of a graph with negative
// edges, found by the system's relaxation from the topological pass's
// solution; where they admit none (a cycle of positive weight) it is an
// error. Where no rule adds a constraint back, the topological pass's
// solution is the answer. A micro-batch is delayed only as much as its
// budget asks: its first blocks start later, so that it finishes within
// the budget.
func orders(sp spec.Spec, keep Keep) ([]schedule.Instance, error) {
	g, err := newGraph(sp.Placement, sp.MicroBatches, keep.Orders, keep.Pairs)
	if err != nil {
		return nil, err
	}
	// The rules' constraints that point forward (the latency budget's
	// point back: ConstrainBack, below).
	hint, err := g.solve(sp, keep.Release, nil)
	if err != nil {
		return nil, err
	}
	settled, err := settle(sp, keep.Orders, g, hint)
	if err != nil {
		return nil, err
	}
	if settled != nil {
		return g.instances(settled), nil
	}
	// The instances stay in the order of these starts (file order
	// without the budget); only their starts move.
	ins := g.instances(hint)
	back, err := constrainBack(&rule.Retiming{Spec: sp, Var: g.node, Sys: &g.sys})
	if err != nil {
		return nil, err
	}
	if back == 0 {
		return ins, nil
	}
	// The starts without the constraints back are the least solution of
	// the others: as the hint, they order the relaxation so that one
	// round settles every path of device orders and dependencies (each
	// edge goes forward in them, by a block's time at least), and each
	// round after settles one more constraint back of a longest path. A
	// longest path uses each of them at most once: more rounds than there
	// are such constraints mean a cycle of positive weight. Being the
	// least solution of fewer constraints, they are also floors of this
	// one's, which spares the rounds a start from 0 would take to find
	// them again.
	g.sys.Hint, g.sys.Floor = hint, hint
	g.sys.Rounds = back + 2
	start, err := g.sys.Relax()
	if err != nil {
		return nil, fmt.Errorf("compact: these device orders meet no latency budget %d", sp.Latency)
	}
	for x := range ins {
		ins[x].Start = start[g.node(ins[x].Ref())]
	}
	return ins, nil
}

// settle asks the rules whose waits depend on the times (rule.Settler,
// in the list's order) for the least starts under sp's budget, from
// hint, the least starts of g without it: the first that answers gives
// them; nil where none does (none where sp has no budget). Each of its
// passes is a compaction of the orders afresh (a rule's visit books its
// queues from empty) with release times, the constraints back left out.
func settle(sp spec.Spec, orders [][]schedule.Ref, g *graph, hint []int) ([]int, error) {
	var solveErr error
	st := &rule.Settling{Spec: sp, Var: g.node, Start: hint, Solve: func(release []int) ([]int, error) {
		g, err := newGraph(sp.Placement, sp.MicroBatches, orders, nil)
		if err == nil {
			var start []int
			if start, err = g.solve(sp, nil, release); err == nil {
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
		ins, err := orders(out.Spec, Keep{Orders: schedule.Orders(s)})
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
