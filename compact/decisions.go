package compact

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
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
// transfer at a time (Channels) are not compacted with decisions (an
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
	if p.Channels {
		return nil, fmt.Errorf("compact: a schedule that offloads or recomputes on links that carry one transfer at a time")
	}
	c := newCompactor(s)
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

// compactor holds the difference constraints x ≥ y + w over the
// variables: the start of every instance (0..I-1), then per decision its
// Start and its Reload.
type compactor struct {
	s     *schedule.Schedule
	vars  int
	cons  []constraint
	orig  []int
	decAt int // index of decision 0's Start variable
}

type constraint struct{ x, y, w int }

// add is the constraint v_x ≥ v_y + w.
func (c *compactor) add(x, y, w int) { c.cons = append(c.cons, constraint{x, y, w}) }

// timeDecisions adds the decisions' timing: an offload's start after its
// forward, its reload after the move out, the consumer after the move
// back; a recompute after its forward and before the consumer (its
// Reload variable unused, pinned at 0). at is the index of an instance.
func (c *compactor) timeDecisions(at func(schedule.Ref) int) {
	s, ni := c.s, c.decAt
	p := s.Placement
	consumers := p.Consumers()
	for k, dc := range s.Decisions {
		f := at(dc.Ref())
		use := at(schedule.Ref{Block: consumers[dc.Block], Micro: dc.Micro})
		st, rl := ni+2*k, ni+2*k+1
		t := p.Blocks[dc.Block].Time
		switch dc.Action {
		case placement.Offload:
			tt := p.OffloadTime(dc.Block)
			c.add(st, f, t)
			c.add(rl, st, tt)
			c.add(use, rl, tt)
		case placement.Recompute:
			c.add(st, f, t)
			c.add(use, st, t)
			c.add(rl, -1, 0) // unused: pinned at 0
		}
	}
}

func newCompactor(s *schedule.Schedule) *compactor {
	p := s.Placement
	ni := len(s.Instances)
	c := &compactor{s: s, decAt: ni, vars: ni + 2*len(s.Decisions)}
	c.orig = make([]int, c.vars)
	// at is the index of B_i^m at m·K+i: a slice, not a map (this runs
	// on every list schedule that decides, at every N).
	k := len(p.Blocks)
	index := make([]int, s.MicroBatches*k)
	for x, in := range s.Instances {
		c.orig[x] = in.Start
		index[in.Micro*k+in.Block] = x
	}
	at := func(r schedule.Ref) int { return index[r.Micro*k+r.Block] }
	for k, dc := range s.Decisions {
		c.orig[ni+2*k], c.orig[ni+2*k+1] = dc.Start, dc.Reload
	}
	// Presized: at 10,000 micro-batches the growing slices cost more
	// than the constraints.
	preds := p.PredDeps()
	ncons := 3 * len(s.Decisions)
	for _, in := range s.Instances {
		ncons += len(preds[in.Block])
	}
	c.cons = make([]constraint, 0, ncons)
	add := c.add
	// Dependencies.
	for x, in := range s.Instances {
		for _, d := range preds[in.Block] {
			add(x, at(schedule.Ref{Block: d.From, Micro: in.Micro}), p.Delay(d))
		}
	}
	c.timeDecisions(at)
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
	chans := map[int][]item{}
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
		if dc.Action == placement.Offload {
			tt := p.OffloadTime(dc.Block)
			for _, ch := range p.BlockChannels(dc.Block) {
				chans[ch] = append(chans[ch], item{v: st, off: tt, time: dc.Start, block: dc.Block, micro: dc.Micro, seq: 2 * k},
					item{v: rl, off: tt, time: dc.Reload, block: dc.Block, micro: dc.Micro, seq: 2*k + 1})
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
	for _, list := range chans {
		slices.SortFunc(list, order)
		for k := 1; k < len(list); k++ {
			add(list[k].v, list[k-1].v, list[k-1].off)
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

// solve finds the least solution ≥ 0 of the constraints: in one
// topological pass where they form no cycle, else by relaxation; the
// schedule given is a solution, so it converges unless the orders
// contradict each other.
func (c *compactor) solve() error {
	start, ok := c.topological()
	if !ok {
		var err error
		if start, err = c.relax(); err != nil {
			return err
		}
	}
	c.orig = start
	return nil
}

// relax is the least solution by relaxation rounds (Bellman–Ford from
// 0), for constraints with cycles.
func (c *compactor) relax() ([]int, error) {
	start := make([]int, c.vars)
	// The constraints by the given time of the variable they start
	// from: the given schedule is a solution, so most of them point
	// forward in time and one round in this order settles them; listed
	// in any other order, the rounds grow with N. (The least solution is
	// the same in any order.)
	cons := slices.Clone(c.cons)
	from := func(k constraint) int {
		if k.y < 0 || k.y >= len(c.orig) {
			return -1
		}
		return c.orig[k.y]
	}
	slices.SortStableFunc(cons, func(a, b constraint) int { return cmp.Compare(from(a), from(b)) })
	for round := 0; ; round++ {
		changed := false
		for _, k := range cons {
			base := 0
			if k.y >= 0 {
				base = start[k.y]
			}
			if v := base + k.w; v > start[k.x] {
				start[k.x], changed = v, true
			}
		}
		if !changed {
			return start, nil
		}
		if round > c.vars+1 {
			return nil, fmt.Errorf("compact: the orders of the schedule contradict each other")
		}
	}
}

// topological is solve's least solution in one pass over a topological
// order of the constraints, where they form no cycle (the usual case):
// relaxation rounds alone take as many rounds as the longest chain of
// constraints listed against its order, which grows with N. ok is false
// where they form a cycle; solve then relaxes.
func (c *compactor) topological() (start []int, ok bool) {
	indeg := make([]int, c.vars)
	first := make([]int, c.vars+1) // constraints by y: out[first[y]:first[y+1]]
	start = make([]int, c.vars)
	for _, k := range c.cons {
		switch {
		case k.y < 0:
			start[k.x] = max(start[k.x], k.w)
		case k.y == k.x:
			if k.w > 0 {
				return nil, false
			}
		default:
			indeg[k.x]++
			first[k.y+1]++
		}
	}
	for y := range c.vars {
		first[y+1] += first[y]
	}
	out := make([]int, first[c.vars])
	fill := slices.Clone(first[:c.vars])
	for i, k := range c.cons {
		if k.y >= 0 && k.y != k.x {
			out[fill[k.y]] = i
			fill[k.y]++
		}
	}
	queue := make([]int, 0, c.vars)
	for v, d := range indeg {
		if d == 0 {
			queue = append(queue, v)
		}
	}
	for h := 0; h < len(queue); h++ {
		y := queue[h]
		for _, i := range out[first[y]:first[y+1]] {
			k := c.cons[i]
			start[k.x] = max(start[k.x], start[y]+k.w)
			if indeg[k.x]--; indeg[k.x] == 0 {
				queue = append(queue, k.x)
			}
		}
	}
	return start, len(queue) == c.vars
}

// result is the instances and decisions at the solved starts.
func (c *compactor) result() ([]schedule.Instance, []schedule.Decision) {
	ins := append([]schedule.Instance(nil), c.s.Instances...)
	for x := range ins {
		ins[x].Start = c.orig[x]
	}
	decs := append([]schedule.Decision(nil), c.s.Decisions...)
	for k := range decs {
		decs[k].Start = c.orig[c.decAt+2*k]
		if decs[k].Action == placement.Offload {
			decs[k].Reload = c.orig[c.decAt+2*k+1]
		}
	}
	return ins, decs
}
