package compact

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// decisions is Compact for a schedule that offloads or recomputes
// (without decisions it is Compact of s's orders): every start as early
// as these orders allow —
//
//   - every device keeps its order of instances and recomputes;
//   - every host channel keeps its order of offloads and reloads;
//   - every device keeps its order of memory changes (instance starts,
//     an offload's end, a recomputed forward's end, a reload's start, a
//     recompute's start), two of them at one time falling into the
//     memory phases' order;
//   - the dependencies (placement's Delay) and the decisions' timing rule
//     (placement's EarliestOffload, EarliestReload, LatestReload,
//     EarliestRecompute, LatestRecompute).
//
// Keeping the order of memory changes keeps every running sum, and where
// two changes come to share a time the phases put a free first and a
// return last, which never raises a peak: the result fits wherever s
// did, and ends no later. s must verify; placements whose links carry one
// transfer at a time (QueuedLinks) are not compacted with decisions (an
// error). The result is verified.
func decisions(s *schedule.Schedule) (*schedule.Schedule, error) {
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	return decisionsUnchecked(s)
}

// decisionsUnchecked is decisions of a schedule whose instances
// and decisions are complete and consistent but whose times may not fit
// its placement (OnCluster: the orders of a schedule on another cluster).
func decisionsUnchecked(s *schedule.Schedule) (*schedule.Schedule, error) {
	p := s.Placement
	out := &schedule.Schedule{Spec: spec.Spec{Placement: p, Cluster: s.Cluster, Given: s.Given, MicroBatches: s.MicroBatches, Memory: s.Memory}}
	if len(s.Decisions) == 0 {
		ins, err := orders(spec.New(p, s.MicroBatches), Keep{Orders: schedule.Orders(s)})
		if err != nil {
			return nil, err
		}
		out.Instances = ins
		return out, nil
	}
	if err := refuse(&rule.Retiming{Spec: out.Spec, From: s}); err != nil {
		return nil, err
	}
	c, err := newCompactor(s, out.Spec)
	if err != nil {
		return nil, err
	}
	if err := c.solve(); err != nil {
		return nil, err
	}
	out.Instances, out.Decisions = c.result()
	out.Sort()
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("compact: the compacted schedule fails verification (a bug): %w", err)
	}
	return out, nil
}

// compactor holds the difference constraints x ≥ y + w (a
// system.System whose hint is the schedule's times) over the variables:
// the start of every instance (0..I-1), then those the rules make (the
// decisions' starts and reloads, rule/hostchan's; t.Decision).
type compactor struct {
	s   *schedule.Schedule
	t   *rule.Retiming
	val []int // the solution, once solved
}

// newCompactor is the system of s's orders kept for spec sp: a variable
// per instance and the dependencies; then the rules' constraints
// (constrain: the decisions' variables and timing and the host channels'
// orders, rule/hostchan; the memory orders, rule/memory; a latency
// budget's edges, rule/latency); then every device's order of busy items,
// instances and recomputes.
func newCompactor(s *schedule.Schedule, sp spec.Spec) (*compactor, error) {
	p := s.Placement
	ni := len(s.Instances)
	// Room for the decisions' variables, which rule/hostchan adds.
	sys := &system.System{Vars: ni, Hint: make([]int, ni, ni+2*len(s.Decisions))}
	// at is the index of B_i^m at m·K+i: a slice, not a map (this runs
	// on every list schedule that decides, at every N).
	k := len(p.Blocks)
	index := make([]int, s.MicroBatches*k)
	for x, in := range s.Instances {
		sys.Hint[x] = in.Start
		index[in.Micro*k+in.Block] = x
	}
	at := func(r schedule.Ref) int { return index[r.Micro*k+r.Block] }
	// Presized: at 10,000 micro-batches the growing slices cost more
	// than the constraints.
	preds := p.PredDeps()
	ncons := 3 * len(s.Decisions)
	for _, in := range s.Instances {
		ncons += len(preds[in.Block])
	}
	sys.Cons = make([]system.Constraint, 0, ncons)
	// Dependencies.
	for x, in := range s.Instances {
		for _, d := range preds[in.Block] {
			sys.Add(x, at(schedule.Ref{Block: d.From, Micro: in.Micro}), p.Delay(d))
		}
	}
	c := &compactor{s: s, t: &rule.Retiming{Spec: sp, From: s, Var: at, Sys: sys}}
	if err := constrain(c.t); err != nil {
		return nil, err
	}
	if _, err := constrainBack(c.t); err != nil {
		return nil, err
	}
	if len(s.Decisions) > 0 && c.t.Decision == nil {
		return nil, fmt.Errorf("compact: no rule made the variables of the decisions")
	}
	c.deviceOrders()
	return c, nil
}

// deviceOrders adds every device's order of busy items: its instances
// and recomputes (a recompute occupies its devices like a block), by
// their given starts, then block, micro-batch and instance or decision.
func (c *compactor) deviceOrders() {
	s, sys := c.s, c.t.Sys
	p := s.Placement
	ni := len(s.Instances)
	type item struct {
		v, time, dur, block, micro, seq int
	}
	busy := make([][]item, p.Devices)
	nbusy := make([]int, p.Devices)
	for _, in := range s.Instances {
		for _, d := range p.Blocks[in.Block].Devices {
			nbusy[d]++
		}
	}
	for _, dc := range s.Decisions {
		for _, d := range p.Blocks[dc.Block].Devices {
			nbusy[d]++
		}
	}
	for d := range busy {
		busy[d] = make([]item, 0, nbusy[d])
	}
	for x, in := range s.Instances {
		for _, d := range p.Blocks[in.Block].Devices {
			busy[d] = append(busy[d], item{v: x, time: in.Start, dur: p.Blocks[in.Block].Time, block: in.Block, micro: in.Micro, seq: x})
		}
	}
	for k, dc := range s.Decisions {
		if dc.Action != placement.Recompute {
			continue
		}
		b := p.Blocks[dc.Block]
		for _, d := range b.Devices {
			busy[d] = append(busy[d], item{v: c.t.Decision(k), time: dc.Start, dur: b.Time, block: dc.Block, micro: dc.Micro, seq: ni + k})
		}
	}
	order := func(a, b item) int {
		if a.time != b.time {
			return a.time - b.time
		}
		if a.block != b.block {
			return a.block - b.block
		}
		if a.micro != b.micro {
			return a.micro - b.micro
		}
		return a.seq - b.seq
	}
	for _, list := range busy {
		slices.SortFunc(list, order)
		for k := 1; k < len(list); k++ {
			sys.Add(list[k].v, list[k-1].v, list[k-1].dur)
		}
	}
}

// solve finds the least solution ≥ 0 of the constraints (the system's
// Solve: one topological pass where they form no cycle, else
// relaxation); the schedule given is a solution, so it converges unless
// the orders contradict each other.
func (c *compactor) solve() error {
	start, err := c.t.Sys.Solve()
	if err != nil {
		return fmt.Errorf("compact: the orders of the schedule contradict each other")
	}
	c.val = start
	return nil
}

// result is the instances and decisions at the solved starts.
func (c *compactor) result() ([]schedule.Instance, []schedule.Decision) {
	ins := append([]schedule.Instance(nil), c.s.Instances...)
	for x := range ins {
		ins[x].Start = c.val[x]
	}
	decs := append([]schedule.Decision(nil), c.s.Decisions...)
	for k := range decs {
		decs[k].Start = c.val[c.t.Decision(k)]
		if decs[k].Action == placement.Offload {
			decs[k].Reload = c.val[c.t.Decision(k)+1]
		}
	}
	return ins, decs
}
