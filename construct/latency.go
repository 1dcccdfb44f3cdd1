package construct

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// LatencyList is a list schedule of n micro-batches of p under a latency
// budget (placement's "Latency"; 0: none): micro-batch after
// micro-batch, each block at the earliest time its dependencies and its
// devices allow, filling gaps that earlier micro-batches left; where a
// micro-batch would take longer than the budget, its first blocks are
// delayed (its release moves later, by at least the excess) until it
// finishes within it. Alone on the devices a micro-batch takes its
// latency with one block of a device at a time: a budget below that is an
// error. The memory budget is checked, not planned for (the schedule is
// an error when it is over it): inference placements hold no memory.
// With links that carry one transfer at a time (rule/links) the
// links are booked too (latencyListLinks). The result is compacted
// under the budget (compact.Compact) and verified.
func LatencyList(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory, budget := sp.Placement, sp.MicroBatches, sp.Memory, sp.Latency
	if err := checkArgs(p, n, memory); err != nil {
		return nil, err
	}
	if err := p.CheckLatency(budget); err != nil {
		return nil, fmt.Errorf("construct: %w", err)
	}
	if (links.Rule{}).On(sp) {
		ins, err := latencyListLinks(p, n, budget)
		if err != nil {
			return nil, err
		}
		return latencyListed(p, n, memory, budget, ins)
	}
	topo, _ := p.Topo()
	preds := p.PredDeps()
	busy := make([][][2]int, p.Devices) // sorted, disjoint [start, end) per device
	place := func(release int) []int {
		starts := make([]int, len(p.Blocks))
		for _, i := range topo {
			at := release
			for _, d := range preds[i] {
				at = max(at, starts[d.From]+p.Delay(d))
			}
			starts[i] = earliestFree(busy, p.Blocks[i].Devices, at, p.Blocks[i].Time)
		}
		return starts
	}
	ins := make([]schedule.Instance, 0, n*len(p.Blocks))
	release := 0
	for m := range n {
		var starts []int
		for {
			starts = place(release)
			lat := p.Latency(starts)
			if budget <= 0 || lat <= budget {
				break
			}
			last := lastEnd(busy)
			if release >= last {
				return nil, fmt.Errorf("construct: placement %q: one micro-batch alone takes %d > latency budget %d with one block of a device at a time", p.Name, lat, budget)
			}
			release = min(release+lat-budget, last)
		}
		first := starts[0]
		for i, s := range starts {
			first = min(first, s)
			ins = append(ins, schedule.Instance{Block: i, Micro: m, Start: s})
			bookDevices(busy, p.Blocks[i].Devices, s, p.Blocks[i].Time)
		}
		release = first // micro-batches start in order
	}
	return latencyListed(p, n, memory, budget, ins)
}

// latencyListed is the schedule of LatencyList's instances, compacted
// under the budget where that ends no later, and verified.
func latencyListed(p *placement.Placement, n, memory, budget int, ins []schedule.Instance) (*schedule.Schedule, error) {
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory, Latency: budget}, Instances: ins}
	cs, err := compact.Compact(s.Spec, compact.Keep{Orders: schedule.Orders(s)})
	if err == nil {
		c := *s
		c.Instances = cs.Instances
		if verify.Schedule(&c) == nil && schedule.Makespan(&c) <= schedule.Makespan(s) {
			s = &c
		}
	}
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("construct: placement %q: latency list schedule: %w", p.Name, err)
	}
	return s, nil
}

// WithLatency is s re-timed under a latency budget: its device orders
// compacted under the budget (compact.Compact), verified with the
// budget recorded. ok is false when its orders meet no schedule within
// the budget. A schedule that offloads or recomputes keeps its decisions
// and every order a compaction with decisions keeps (compact.Keep.From);
// offloads and recomputes lie inside their micro-batch, and re-timing may
// lengthen it no further than the budget, or the schedule is dropped.
func WithLatency(s *schedule.Schedule, budget int) (out *schedule.Schedule, ok bool) {
	if s == nil {
		return nil, false
	}
	t := *s
	t.Latency = budget
	t.Claimed = nil
	if verify.Schedule(&t) == nil {
		return &t, true
	}
	if len(s.Decisions) > 0 {
		c, err := compact.Compact(t.Spec, compact.Keep{From: &t})
		if err != nil || verify.Schedule(c) != nil {
			return nil, false
		}
		c.Repetend, c.Claimed = nil, nil
		return c, true
	}
	cs, err := compact.Compact(spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches, Latency: budget}, compact.Keep{Orders: schedule.Orders(s)})
	if err != nil {
		return nil, false
	}
	ins := cs.Instances
	t.Instances, t.Repetend = ins, nil
	if verify.Schedule(&t) != nil {
		return nil, false
	}
	return &t, true
}

// latencyPortfolio is Portfolio under a latency budget (> 0): every
// candidate of the portfolio re-timed under the budget (WithLatency) where
// its orders allow, and the latency list schedule (LatencyList, named
// "list/latency"), best first as the portfolio orders them. With links
// that carry one transfer at a time both time the transfers by the queue
// (compact.Compact); the list schedules that offload or recompute
// (the spec's Allowed) are re-timed with their decisions, and left out
// where they meet no schedule within the budget.
func latencyPortfolio(ctx context.Context, sp spec.Spec) ([]Entry, error) {
	p, budget := sp.Placement, sp.Latency
	if err := p.CheckLatency(budget); err != nil {
		return nil, fmt.Errorf("construct: %w", err)
	}
	cands, err := portfolio(ctx, p, sp.MicroBatches, sp.Memory, sp.Allowed)
	if err != nil {
		return nil, err
	}
	var out []Entry
	if s, err := LatencyList(sp); err == nil {
		out = append(out, Entry{Name: "list/latency", Schedule: s, Makespan: schedule.Makespan(s)})
	}
	for _, c := range cands {
		s, ok := WithLatency(c.Schedule, budget)
		if !ok {
			continue
		}
		if !slices.Equal(s.Instances, c.Schedule.Instances) {
			c.Periodic = nil // re-timed: no longer the modulo schedule
		}
		c.Schedule, c.Makespan = s, schedule.Makespan(s)
		out = append(out, c)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Makespan < out[b].Makespan })
	return out, nil
}

// latencyListLinks is LatencyList's list schedule with links that carry
// one transfer at a time (rule/links): the instances, not yet
// compacted. Blocks fill gaps on their devices as without channels, and
// every transfer is booked on each link its tensor crosses, as an
// interval [x, x+c) (c its time, Transfer: where a pair has several
// links, one queue of the least time is never earlier than they are,
// placement's LinkQueue), in the link's queue order: by its producer's
// start, then producer block, micro-batch, dependency and destination
// device, the order the verifier books them in. A block is placed only
// where each of its transfers fits between the transfer before it in
// that order (x at least that one's end and the block's end) and the one
// after it (x+c at most that one's start): the bookings already made
// stay valid, and the queue, which starts every transfer as soon as it
// can in the same order, never delivers a tensor later than its booking.
// Where one does not fit, the block moves past the next producer's start.
func latencyListLinks(p *placement.Placement, n, budget int) ([]schedule.Instance, error) {
	topo, _ := p.Topo()
	preds, succs := p.PredDeps(), p.SuccDeps()
	depIndex := make(map[placement.Dep]int, len(p.Deps))
	for x, d := range p.Deps {
		depIndex[d] = x
	}
	type booking struct {
		key      [5]int // producer start, producer block, micro-batch, dependency, destination device
		from, to int
	}
	less := func(a, b [5]int) bool { return slices.Compare(a[:], b[:]) < 0 }
	busy := make([][][2]int, p.Devices) // sorted, disjoint [start, end) per device
	links := map[placement.Link][]booking{}
	// slot is where block i of micro-batch m starting at at puts the
	// transfer of d on l: its position in l's bookings and its start; ok
	// is false where it does not fit before the next one, whose
	// producer's start is then next.
	slot := func(links map[placement.Link][]booking, l placement.Link, d placement.Dep, m, at int) (pos, x, next int, ok bool) {
		bs := links[l]
		key := [5]int{at, d.From, m, depIndex[d], l.To}
		pos = sort.Search(len(bs), func(k int) bool { return less(key, bs[k].key) })
		x = at + p.Blocks[d.From].Time
		if pos > 0 {
			x = max(x, bs[pos-1].to)
		}
		if pos < len(bs) && x+p.Transfer(d) > bs[pos].from {
			return pos, x, bs[pos].key[0], false
		}
		return pos, x, 0, true
	}
	type trial struct {
		busy   [][][2]int
		links  map[placement.Link][]booking
		starts []int
	}
	place := func(m, release int) trial {
		tr := trial{busy: make([][][2]int, p.Devices), links: make(map[placement.Link][]booking, len(links)), starts: make([]int, len(p.Blocks))}
		for d, iv := range busy {
			tr.busy[d] = slices.Clone(iv)
		}
		for l, bs := range links {
			tr.links[l] = slices.Clone(bs)
		}
		arrival := map[placement.Dep]int{}
		for _, i := range topo {
			blk := p.Blocks[i]
			at := release
			for _, d := range preds[i] {
				at = max(at, arrival[d])
			}
		search:
			for {
				at = earliestFree(tr.busy, blk.Devices, at, blk.Time)
				for _, d := range succs[i] {
					for _, l := range p.Links(d) {
						if _, _, next, ok := slot(tr.links, l, d, m, at); !ok {
							at = max(at+1, next+1)
							continue search
						}
					}
				}
				break
			}
			tr.starts[i] = at
			bookDevices(tr.busy, blk.Devices, at, blk.Time)
			for _, d := range succs[i] {
				arrival[d] = at + p.Delay(d)
				for _, l := range p.Links(d) {
					pos, x, _, _ := slot(tr.links, l, d, m, at)
					b := booking{key: [5]int{at, d.From, m, depIndex[d], l.To}, from: x, to: x + p.Transfer(d)}
					tr.links[l] = slices.Insert(tr.links[l], pos, b)
					arrival[d] = max(arrival[d], b.to)
				}
			}
		}
		return tr
	}
	ins := make([]schedule.Instance, 0, n*len(p.Blocks))
	release := 0
	for m := range n {
		var tr trial
		for {
			tr = place(m, release)
			lat := p.Latency(tr.starts)
			if budget <= 0 || lat <= budget {
				break
			}
			last := lastEnd(busy)
			for _, bs := range links {
				for _, b := range bs {
					last = max(last, b.to)
				}
			}
			if release >= last {
				return nil, fmt.Errorf("construct: placement %q: one micro-batch alone takes %d > latency budget %d with one block of a device and one transfer of a link at a time", p.Name, lat, budget)
			}
			release = min(release+lat-budget, last)
		}
		busy, links = tr.busy, tr.links
		first := tr.starts[0]
		for i, s := range tr.starts {
			first = min(first, s)
			ins = append(ins, schedule.Instance{Block: i, Micro: m, Start: s})
		}
		release = first // micro-batches start in order
	}
	return ins, nil
}

// earliestFree is the earliest t ≥ at with [t, t+dur) free on every
// device of devs, busy holding each device's sorted, disjoint [start,
// end) intervals.
func earliestFree(busy [][][2]int, devs []int, at, dur int) int {
	for {
		moved := false
		for _, d := range devs {
			iv := busy[d]
			k := sort.Search(len(iv), func(k int) bool { return iv[k][1] > at })
			if k < len(iv) && iv[k][0] < at+dur {
				at, moved = iv[k][1], true
			}
		}
		if !moved {
			return at
		}
	}
}

// bookDevices books [at, at+dur) on every device of devs in busy.
func bookDevices(busy [][][2]int, devs []int, at, dur int) {
	for _, d := range devs {
		iv := busy[d]
		k := sort.Search(len(iv), func(k int) bool { return iv[k][0] > at })
		busy[d] = slices.Insert(iv, k, [2]int{at, at + dur})
	}
}

// lastEnd is the latest end of an interval in busy (0 when none).
func lastEnd(busy [][][2]int) int {
	last := 0
	for _, iv := range busy {
		if len(iv) > 0 {
			last = max(last, iv[len(iv)-1][1])
		}
	}
	return last
}
