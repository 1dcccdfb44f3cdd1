package compact

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/links"
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
		ins, err := compact(p, s.MicroBatches, schedule.Orders(s), nil, nil)
		if err != nil {
			return nil, err
		}
		out.Instances = ins
		return out, nil
	}
	if err := decidable(p); err != nil {
		return nil, err
	}
	c := newCompactor(s)
	if err := constrain(c.retiming(out.Spec)); err != nil {
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

// decidable says whether schedules of p that offload or recompute can be
// compacted: not where its links carry one transfer at a time (the
// compactor of decisions has no topological pass to book the link
// queues in).
func decidable(p *placement.Placement) error {
	if links.Queued(p) {
		return fmt.Errorf("compact: a schedule that offloads or recomputes on links that carry one transfer at a time")
	}
	return nil
}

// compactor holds the difference constraints x ≥ y + w (a
// system.System whose hint is the schedule's times) over the variables:
// the start of every instance (0..I-1), then per decision its Start and
// its Reload.
type compactor struct {
	s     *schedule.Schedule
	sys   *system.System
	val   []int // the solution, once solved
	decAt int   // index of decision 0's Start variable
	at    func(schedule.Ref) int
}

// retiming is the compaction as the rules constrain it (rule.Retiming),
// for spec sp: the decisions' timing and the host channels' orders
// (rule/hostchan), a latency budget's edges (rule/latency).
func (c *compactor) retiming(sp spec.Spec) *rule.Retiming {
	return &rule.Retiming{Spec: sp, From: c.s, Var: c.at, Decision: func(k int) int { return c.decAt + 2*k }, Sys: c.sys}
}

// add is the constraint v_x ≥ v_y + w.
func (c *compactor) add(x, y, w int) { c.sys.Add(x, y, w) }

func newCompactor(s *schedule.Schedule) *compactor {
	p := s.Placement
	ni := len(s.Instances)
	vars := ni + 2*len(s.Decisions)
	c := &compactor{s: s, decAt: ni, sys: &system.System{Vars: vars, Hint: make([]int, vars)}}
	orig := c.sys.Hint
	// at is the index of B_i^m at m·K+i: a slice, not a map (this runs
	// on every list schedule that decides, at every N).
	k := len(p.Blocks)
	index := make([]int, s.MicroBatches*k)
	for x, in := range s.Instances {
		orig[x] = in.Start
		index[in.Micro*k+in.Block] = x
	}
	at := func(r schedule.Ref) int { return index[r.Micro*k+r.Block] }
	c.at = at
	for k, dc := range s.Decisions {
		orig[ni+2*k], orig[ni+2*k+1] = dc.Start, dc.Reload
	}
	// Presized: at 10,000 micro-batches the growing slices cost more
	// than the constraints.
	preds := p.PredDeps()
	ncons := 3 * len(s.Decisions)
	for _, in := range s.Instances {
		ncons += len(preds[in.Block])
	}
	c.sys.Cons = make([]system.Constraint, 0, ncons)
	add := c.add
	// Dependencies.
	for x, in := range s.Instances {
		for _, d := range preds[in.Block] {
			add(x, at(schedule.Ref{Block: d.From, Micro: in.Micro}), p.Delay(d))
		}
	}
	// Device orders of busy items (instances and recomputes), and of
	// memory changes; host channel orders of moves.
	type item struct {
		v, off, time, phase, block, micro, seq int // time = orig[v] + off
	}
	busy := make([][]item, p.Devices)
	mem := make([][]item, p.Devices)
	nbusy, nmem := make([]int, p.Devices), make([]int, p.Devices)
	for _, in := range s.Instances {
		for _, d := range p.Blocks[in.Block].Devices {
			nbusy[d]++
			nmem[d]++
		}
	}
	for _, dc := range s.Decisions {
		for _, d := range p.Blocks[dc.Block].Devices {
			nbusy[d]++
			nmem[d] += 2
		}
	}
	for d := range busy {
		busy[d] = make([]item, 0, nbusy[d])
		mem[d] = make([]item, 0, nmem[d])
	}
	for x, in := range s.Instances {
		for _, d := range p.Blocks[in.Block].Devices {
			busy[d] = append(busy[d], item{v: x, time: in.Start, block: in.Block, micro: in.Micro, seq: x})
			mem[d] = append(mem[d], item{v: x, time: in.Start, phase: placement.PhaseBlock, block: in.Block, micro: in.Micro, seq: x})
		}
	}
	for k, dc := range s.Decisions {
		st, rl := ni+2*k, ni+2*k+1
		b := p.Blocks[dc.Block]
		f := at(dc.Ref())
		for _, d := range b.Devices {
			switch dc.Action {
			case placement.Offload:
				tt := p.OffloadTime(dc.Block)
				mem[d] = append(mem[d], item{v: st, off: tt, time: dc.Start + tt, phase: placement.PhaseFree, block: dc.Block, micro: dc.Micro, seq: ni + k},
					item{v: rl, time: dc.Reload, phase: placement.PhaseReturn, block: dc.Block, micro: dc.Micro, seq: ni + k})
			case placement.Recompute:
				busy[d] = append(busy[d], item{v: st, time: dc.Start, block: dc.Block, micro: dc.Micro, seq: ni + k})
				mem[d] = append(mem[d], item{v: f, off: b.Time, time: s.Instances[f].Start + b.Time, phase: placement.PhaseFree, block: dc.Block, micro: dc.Micro, seq: ni + k},
					item{v: st, time: dc.Start, phase: placement.PhaseReturn, block: dc.Block, micro: dc.Micro, seq: ni + k})
			}
		}
	}
	order := func(a, b item) int {
		if a.time != b.time {
			return a.time - b.time
		}
		if a.phase != b.phase {
			return a.phase - b.phase
		}
		if a.block != b.block {
			return a.block - b.block
		}
		if a.micro != b.micro {
			return a.micro - b.micro
		}
		return a.seq - b.seq
	}
	length := func(it item) int { // a busy item's or a move's time
		if it.v < ni {
			return p.Blocks[s.Instances[it.v].Block].Time
		}
		if it.off > 0 {
			return it.off
		}
		return p.Blocks[it.block].Time
	}
	for _, list := range busy {
		slices.SortFunc(list, order)
		for k := 1; k < len(list); k++ {
			add(list[k].v, list[k-1].v, length(list[k-1]))
		}
	}
	for _, list := range mem {
		slices.SortFunc(list, order)
		for k := 1; k < len(list); k++ {
			// time(k) ≥ time(k-1): v_k + off_k ≥ v_{k-1} + off_{k-1}.
			add(list[k].v, list[k-1].v, list[k-1].off-list[k].off)
		}
	}
	return c
}

// solve finds the least solution ≥ 0 of the constraints (the system's
// Solve: one topological pass where they form no cycle, else
// relaxation); the schedule given is a solution, so it converges unless
// the orders contradict each other.
func (c *compactor) solve() error {
	start, err := c.sys.Solve()
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
		decs[k].Start = c.val[c.decAt+2*k]
		if decs[k].Action == placement.Offload {
			decs[k].Reload = c.val[c.decAt+2*k+1]
		}
	}
	return ins, decs
}
