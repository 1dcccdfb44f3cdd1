package schedule

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/placement"
)

// Bounds are lower bounds that no schedule of the placement can beat.
type Bounds struct {
	Period   int // of a repetend: max_d load_d of one micro-batch
	Makespan int // of N micro-batches; see LowerBounds
}

// Metrics are what a schedule achieves, measured from its start times.
type Metrics struct {
	Makespan   int
	BubbleRate float64 // idle device-time / (D × makespan)
	PeakMemory []int   // per device: the highest running memory, from 0, in start order (offloads and recomputes counted)
	Loads      []int   // per device: busy time over the whole schedule (recomputes included)
	LowerBound Bounds
}

// Makespan is the latest end of any instance (0 for none). Instances of
// unknown blocks are skipped.
func Makespan(s *Schedule) int {
	if s == nil || s.Placement == nil {
		return 0
	}
	ms := 0
	pg := newPairing(s, nil)
	for _, in := range s.Instances {
		if in.Block >= 0 && in.Block < len(s.Placement.Blocks) {
			ms = max(ms, in.Start+pg.dur(s.Placement, in.Ref()))
		}
	}
	return ms
}

// Measure computes the metrics of s. It does not verify s: on an invalid
// schedule the numbers describe the start times as given (instances of
// unknown blocks are skipped), and the bubble rate of overlapping instances
// can be negative.
func Measure(s *Schedule) Metrics {
	var m Metrics
	if s == nil || s.Placement == nil {
		return m
	}
	p := s.Placement
	m.Makespan = Makespan(s)
	m.PeakMemory = make([]int, p.Devices)
	m.Loads = make([]int, p.Devices)
	xs := deviceInstances(s, nil)
	pg := newPairing(s, nil)
	for d, xs := range xs {
		for _, x := range xs {
			if r := s.Instances[x].Ref(); !pg.follower(r) {
				m.Loads[d] += pg.dur(p, r)
			}
		}
	}
	for _, rr := range Reruns(s) {
		for _, d := range p.Blocks[rr.Ref.Block].Devices {
			m.Loads[d] += p.Blocks[rr.Ref.Block].Time
		}
	}
	for d, evs := range memoryEvents(s, xs, nil) {
		sum := 0
		for _, e := range evs {
			sum += e.delta
			m.PeakMemory[d] = max(m.PeakMemory[d], sum)
		}
	}
	if m.Makespan > 0 {
		busy := 0
		for _, l := range m.Loads {
			busy += l
		}
		total := float64(p.Devices) * float64(m.Makespan)
		m.BubbleRate = (total - float64(busy)) / total
	}
	m.LowerBound, _ = LowerBoundsLatency(p, s.MicroBatches, s.Memory, s.Latency)
	return m
}

// LowerBounds returns lower bounds for n micro-batches of p (which must be
// valid). Period ≥ max_d load_d: a repetend runs every block once on each
// device; under a memory budget, also the least period at which a
// micro-batch can hold its peak memory on a device no longer than the
// budget allows (memoryPeriod). Makespan is the largest of:
//
//   - the critical path of one micro-batch (its dependency chain alone);
//
//   - max_d n·load_d: device d runs n·load_d of work, one block at a time;
//
//   - max_d (min head_d + n·load_d + min tail_d), where head_i (tail_i) is
//     the longest dependency path before (after) block i, transfer times
//     included (placement's Heads and Tails), and the minima run
//     over the blocks on d. Proof: the first instance device d runs, of some
//     block i, starts no earlier than head_i ≥ min head_d, since its
//     predecessors in the same micro-batch run before it; from then d is
//     busy for n·load_d in total, one instance at a time, so its last
//     instance, of some block j, ends at E ≥ min head_d + n·load_d; the
//     successors of that instance then need tail_j ≥ min tail_d more.
//
//   - the same with the blocks on all devices taken out (barrierBound):
//     for every device d and every set S of its other blocks whose heads
//     and tails are at least given thresholds, min_S head + n·Σ_S t +
//     min_S tail + n·B, B the time of one micro-batch's blocks on all
//     devices, heads and tails counted with those blocks and transfers
//     at time 0.
//
//   - under a memory budget M_d (placement's Budget), max_d of the memory bound (memoryBound):
//     a device that holds A of one micro-batch's memory for at least ℓ
//     holds it for at most ⌊M/A⌋ micro-batches at a time.
//
//     Where the placement lets activations be offloaded or recomputed
//     (placement's Offloadable, Recomputable), a micro-batch need not hold
//     its memory that long, and this bound is left out for areaBound,
//     which counts memory-time, the host channel's load and the
//     recomputes' device time.
//
//   - with channels (placement's Channels), the same argument for every
//     link ℓ as for a device: it carries n·load_ℓ of transfers one at a
//     time (load_ℓ, the transfer times of the dependencies that cross ℓ),
//     the first no earlier than the least end of their producers in one
//     micro-batch (head + time), the last followed by the least time and
//     tail of their consumers. Period is then at least max_ℓ load_ℓ too.
//
// For n ≤ 0 the makespan bound is 0.
func LowerBounds(p *placement.Placement, n, memory int) Bounds {
	b, _ := LowerBoundsBy(p, n, memory)
	return b
}

// MakespanBound names the argument of LowerBounds that gives the makespan
// bound.
type MakespanBound int

const (
	// BoundCriticalPath: the critical path of one micro-batch.
	BoundCriticalPath MakespanBound = iota
	// BoundDeviceLoad: a device's work, with the least head and tail.
	BoundDeviceLoad
	// BoundLinkLoad: a link's transfers, with channels.
	BoundLinkLoad
	// BoundMemory: the memory budget (memoryBound).
	BoundMemory
	// BoundBarriers: the blocks on all devices cut out of the time line
	// (barrierBound).
	BoundBarriers
	// BoundLatency: the latency budget with the blocks on all devices as
	// barriers (latencyBarrierBound, LowerBoundsLatency).
	BoundLatency
)

// String says what the bound is, for people.
func (b MakespanBound) String() string {
	switch b {
	case BoundCriticalPath:
		return "the critical path"
	case BoundDeviceLoad:
		return "a device's load"
	case BoundLinkLoad:
		return "a link's load"
	case BoundMemory:
		return "the memory budget"
	case BoundBarriers:
		return "the relaxation with blocks on all devices as barriers"
	case BoundLatency:
		return "the latency budget, with blocks on all devices as barriers"
	}
	return fmt.Sprintf("MakespanBound(%d)", int(b))
}

// LowerBoundsBy is LowerBounds and the argument that gives the makespan
// bound (the first to reach it, in the order listed there, links first).
func LowerBoundsBy(p *placement.Placement, n, memory int) (Bounds, MakespanBound) {
	if p.Overlap != nil {
		return overlapBounds(p, n, memory)
	}
	b := Bounds{Period: p.MaxLoad()}
	by := BoundCriticalPath
	heads, tails := p.Heads(), p.Tails()
	if p.Channels {
		b = linkBounds(p, n, b, heads, tails)
		by = BoundLinkLoad
	}
	if p.Limited(memory) {
		b.Period = memoryPeriod(p, memory, b.Period)
	}
	if n <= 0 {
		b.Makespan = 0
		return b, BoundCriticalPath
	}
	raise := func(v int, why MakespanBound) {
		if v > b.Makespan {
			b.Makespan, by = v, why
		}
	}
	if b.Makespan == 0 {
		by = BoundCriticalPath
	}
	raise(p.CriticalPath(), BoundCriticalPath)
	decides := p.HasOffload() || p.HasRecompute()
	if p.Limited(memory) && !decides {
		raise(memoryBound(p, n, memory), BoundMemory)
	}
	raise(barrierBound(p, n), BoundBarriers)
	loads := p.Loads()
	for d, blocks := range p.DeviceBlocks() {
		if len(blocks) == 0 {
			continue
		}
		minHead, minTail := math.MaxInt, math.MaxInt
		for _, i := range blocks {
			minHead = min(minHead, heads[i])
			minTail = min(minTail, tails[i])
		}
		raise(minHead+n*loads[d]+minTail, BoundDeviceLoad)
	}
	if p.Limited(memory) && decides {
		raise(areaBound(p, n, memory, b.Makespan), BoundMemory)
	}
	return b, by
}

// barriers marks the barrier blocks of p: those that run on every
// device (and so hold all of them at once).
func barriers(p *placement.Placement) []bool {
	barrier := make([]bool, len(p.Blocks))
	for i, blk := range p.Blocks {
		seen := map[int]bool{}
		for _, d := range blk.Devices {
			seen[d] = true
		}
		barrier[i] = len(seen) == p.Devices
	}
	return barrier
}

// barrierBound is the makespan bound of the blocks that do not span
// every device, with the time of those that do (barriers) added: zero
// when no block spans every device.
//
// Proof. A barrier occupies every device, so in any schedule no other
// instance overlaps it and no two barriers overlap. Cut the barriers'
// intervals out of the time line: c(t) = t − (barrier time before t). c
// is non-decreasing; every non-barrier instance keeps its length (no
// barrier lies inside it), every barrier instance becomes a point, and
// instances that did not overlap still do not. A dependency i → j with
// s_j ≥ end_i + c_ij gives c(s_j) ≥ c(end_i): the transfer may shrink
// (a barrier may run while a tensor travels), so the relaxation counts
// no transfer time. Along any dependency path of micro-batch m, then,
// c(s_j) ≥ head'_j and c(makespan) ≥ c(end_j) + tail'_j, head' and
// tail' being the heads and tails with barrier times and transfers 0.
// On device d take the set S of its non-barrier blocks whose head' is at
// least r and tail' at least q: in the cut schedule their n·|S|
// instances run one at a time, the first starting no earlier than
// min_S head', the last ending no earlier than min_S head' + n·Σ_S t
// and followed by at least min_S tail', so c(makespan) is at least the
// sum; every barrier instance ends by the makespan, so makespan =
// c(makespan) + n·B. r and q run over the heads and tails of d's
// blocks.
func barrierBound(p *placement.Placement, n int) int {
	order, ok := p.Topo()
	if !ok {
		return 0
	}
	barrier := barriers(p)
	B := 0
	for i, blk := range p.Blocks {
		if barrier[i] {
			B += blk.Time
		}
	}
	if B == 0 {
		return 0
	}
	t := func(i int) int {
		if barrier[i] {
			return 0
		}
		return p.Blocks[i].Time
	}
	// A transfer may overlap a barrier and shrink to nothing in the cut
	// schedule: it counts 0.
	delay := func(d placement.Dep) int { return t(d.From) }
	preds, succs := p.PredDeps(), p.SuccDeps()
	head := make([]int, len(p.Blocks))
	for _, i := range order {
		for _, d := range preds[i] {
			head[i] = max(head[i], head[d.From]+delay(d))
		}
	}
	tail := make([]int, len(p.Blocks))
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		for _, d := range succs[i] {
			tail[i] = max(tail[i], delay(d)+t(d.To)+tail[d.To]-t(i))
		}
	}
	best := 0
	for _, on := range p.DeviceBlocks() {
		var own []int
		for _, i := range on {
			if !barrier[i] {
				own = append(own, i)
			}
		}
		for _, r := range own {
			for _, q := range own {
				lo, work, after, any := math.MaxInt, 0, math.MaxInt, false
				for _, i := range own {
					if head[i] >= head[r] && tail[i] >= tail[q] {
						lo, after, any = min(lo, head[i]), min(after, tail[i]), true
						work += p.Blocks[i].Time
					}
				}
				if any {
					best = max(best, lo+n*work+after+n*B)
				}
			}
		}
	}
	return best
}

// linkBounds raises b by the links' loads (see LowerBounds).
func linkBounds(p *placement.Placement, n int, b Bounds, heads, tails []int) Bounds {
	type link struct{ load, head, tail, lanes int }
	links := map[placement.Link]*link{}
	var order []placement.Link // first seen, for a deterministic walk
	for _, d := range p.Deps {
		c := p.Transfer(d)
		for _, l := range p.Links(d) {
			x := links[l]
			if x == nil {
				x = &link{head: math.MaxInt, tail: math.MaxInt, lanes: 1}
				links[l] = x
				order = append(order, l)
			}
			x.load += c
			x.head = min(x.head, heads[d.From]+p.Blocks[d.From].Time)
			x.tail = min(x.tail, p.Blocks[d.To].Time+tails[d.To])
			x.lanes = max(x.lanes, len(p.Lanes[d]))
		}
	}
	for _, l := range order {
		// A pair of several links (Lanes) shares the load among them:
		// one of them carries at least its share, each transfer taking at
		// least its least time.
		x := links[l]
		b.Period = max(b.Period, ceilDiv(x.load, x.lanes))
		b.Makespan = max(b.Makespan, x.head+ceilDiv(n*x.load, x.lanes)+x.tail)
	}
	return b
}

// memoryBound is a makespan bound from the memory budget M. On a device d
// whose blocks of one micro-batch run in a dependency chain with every
// running memory sum σ ≥ 0, let A be the highest σ. While a micro-batch
// is at A on d — from the start of the block that brings it there to
// the start of the next block that lowers it, at least ℓ apart, ℓ the
// longest path between them — the others hold σ ≥ 0, so at most
// c = ⌊M/A⌋ micro-batches are at A at once. The n intervals, each at
// least ℓ long, c deep at most, cover at least n·ℓ/c of time, which
// starts no earlier than the head of the first block and is followed by
// the time and tail of the second. Devices where the chain or the signs
// fail are left out; so are budgets that one micro-batch exceeds (no
// schedule exists: the verifier says so).
func memoryBound(p *placement.Placement, n, memory int) int {
	heads, tails := p.Heads(), p.Tails()
	order, ok := p.Topo()
	if !ok {
		return 0
	}
	pos := make([]int, len(p.Blocks))
	for k, i := range order {
		pos[i] = k
	}
	dist := startDistance(p, order, pos)
	best := 0
	for _, h := range peakHolds(p, memory, n, pos, dist) {
		l := dist(h.From, h.To)
		best = max(best, heads[h.From]+(n*l+h.C-1)/h.C+p.Blocks[h.To].Time+tails[h.To])
	}
	return best
}

// startDistance returns the longest start-to-start path from block a to
// block b of p (block times and transfers, placement's Delay), or -1
// where b does not depend on a; order is p's topological order and pos
// each block's place in it.
func startDistance(p *placement.Placement, order, pos []int) func(a, b int) int {
	succs := p.SuccDeps()
	return func(a, b int) int {
		far := make([]int, len(p.Blocks))
		for i := range far {
			far[i] = -1
		}
		far[a] = 0
		for _, i := range order[pos[a]:] {
			if far[i] < 0 {
				continue
			}
			for _, d := range succs[i] {
				far[d.To] = max(far[d.To], far[i]+p.Delay(d))
			}
		}
		return far[b]
	}
}

// peakHold is one device's peak of one micro-batch (memoryBound): blocks
// From and To, the first bringing the micro-batch to its peak A on the
// device and the next that lowers it, and C = ⌊M/A⌋, the most
// micro-batches at their peak at once.
type peakHold struct{ From, To, C int }

// peakHolds lists the peaks of memoryBound's devices: those whose blocks
// of one micro-batch run in a dependency chain with every running memory
// sum σ ≥ 0, under a budget one micro-batch does not exceed. n is the
// micro-batch count (0: any), devices where ⌊M/A⌋ ≥ n are left out.
func peakHolds(p *placement.Placement, memory, n int, pos []int, dist func(a, b int) int) []peakHold {
	var out []peakHold
	for d, on := range p.DeviceBlocks() {
		memory := p.Budget(d, memory)
		if memory <= 0 {
			continue
		}
		sort.Slice(on, func(a, b int) bool { return pos[on[a]] < pos[on[b]] })
		chain, peak, sum := true, 0, 0
		for k, i := range on {
			if k > 0 && dist(on[k-1], i) < 0 {
				chain = false
				break
			}
			sum += p.Blocks[i].Memory
			if sum < 0 {
				chain = false
				break
			}
			peak = max(peak, sum)
		}
		if !chain || peak <= 0 || peak > memory || (n > 0 && memory/peak >= n) {
			continue
		}
		c := memory / peak
		sum = 0
		for k, i := range on {
			sum += p.Blocks[i].Memory
			if sum != peak || (k > 0 && sum-p.Blocks[i].Memory == peak) {
				continue
			}
			rest := sum
			for _, j := range on[k+1:] {
				rest += p.Blocks[j].Memory
				if rest < peak {
					out = append(out, peakHold{From: i, To: j, C: c})
					break
				}
			}
		}
	}
	return out
}

// maxPatterns caps the free-slot patterns memoryPeriod tries for one
// period: beyond it (long periods with many barrier units) the period is
// taken as possible, which keeps the bound sound.
const maxPatterns = 20_000

// memoryPeriod is the least period P ≥ lower that the memory budget does
// not rule out (lower itself when it rules nothing out).
//
// Proof. Take a device's peak (peakHolds): block i brings a micro-batch
// to its peak A there, block j is the next that lowers it, every running
// sum is ≥ 0, and c = ⌊M/A⌋. In a repetend of period P every block i runs
// at s_i + kP for micro-batch n_i + k, so every micro-batch holds its
// peak for the same h = start(j) − start(i), and at the moment one
// reaches it the micro-batches at their peak are ⌈h/P⌉: so ⌈h/P⌉ ≤ c,
// that is h ≤ c·P, or the budget breaks. h is at least the time a
// dependency path from i to j takes when its blocks must run where the
// repetend leaves room: the blocks on every device (barriers) run once
// per period each, B in all, occupying every device, so modulo P they
// block B slots of time (integers) for every other block, the same
// slots in every period; a block of time t of the path needs t
// consecutive free slots, and a transfer only delays. Relax: the path's
// own barriers take no time, and the blocked slots are any B of the P
// (the barriers' real intervals are among them). Shift time so that i
// starts at 0; for each choice of blocked slots, running the path's
// blocks each at the earliest start its predecessor and the free slots
// allow gives the least start of j over all schedules with those slots
// (an earlier start of a block never delays the next), so min over the
// choices is a lower bound on h. A period at which that minimum exceeds
// c·P on some device has no repetend under the budget; memoryPeriod
// returns the first P from lower on that no device rules out. The path
// is the one from i to j of most block and transfer time outside
// barriers. Without barriers B = 0 and h is at least that path's
// length: the period analogue of memoryBound.
func memoryPeriod(p *placement.Placement, memory, lower int) int {
	order, ok := p.Topo()
	if !ok || lower < 1 {
		return lower
	}
	pos := make([]int, len(p.Blocks))
	for k, i := range order {
		pos[i] = k
	}
	succs := p.SuccDeps()
	barrier := barriers(p)
	B := 0
	for i, blk := range p.Blocks {
		if barrier[i] {
			B += blk.Time
		}
	}
	own := func(i int) int { // time outside barriers
		if barrier[i] {
			return 0
		}
		return p.Blocks[i].Time
	}
	dist := startDistance(p, order, pos)
	// path returns the blocks and the transfers before each of a path
	// from a to b of most time outside barriers.
	path := func(a, b int) (blocks, lags []int) {
		far := make([]int, len(p.Blocks))
		via := make([]placement.Dep, len(p.Blocks))
		for i := range far {
			far[i] = -1
		}
		far[a] = own(a)
		for _, i := range order[pos[a]:] {
			if far[i] < 0 {
				continue
			}
			for _, d := range succs[i] {
				if v := far[i] + p.Transfer(d) + own(d.To); v > far[d.To] {
					far[d.To], via[d.To] = v, d
				}
			}
		}
		if far[b] < 0 {
			return nil, nil
		}
		for i := b; ; i = via[i].From {
			blocks = append(blocks, i)
			if i == a {
				lags = append(lags, 0)
				break
			}
			lags = append(lags, p.Transfer(via[i]))
		}
		slices.Reverse(blocks)
		slices.Reverse(lags)
		return blocks, lags
	}
	type hold struct {
		blocks, lags []int
		c            int
	}
	var holds []hold
	for _, h := range peakHolds(p, memory, 0, pos, dist) {
		blocks, lags := path(h.From, h.To)
		if blocks != nil {
			holds = append(holds, hold{blocks, lags, h.C})
		}
	}
	if len(holds) == 0 {
		return lower
	}
	for P := lower; ; P++ {
		if B >= P {
			continue // no room for anything else: no repetend
		}
		if binomial(P, B) > maxPatterns {
			return P
		}
		ok := true
		for _, h := range holds {
			if minHold(p, h.blocks, h.lags, barrier, P, B) > h.c*P {
				ok = false
				break
			}
		}
		if ok {
			return P
		}
	}
}

// minHold is the least start of the path's last block, the first
// starting at 0, over every choice of B blocked slots of P (memoryPeriod).
func minHold(p *placement.Placement, blocks, lags []int, barrier []bool, P, B int) int {
	best := math.MaxInt
	blocked := make([]bool, P)
	var try func(from, left int)
	run := func() {
		free := func(s, t int) bool {
			for x := s; x < s+t; x++ {
				if blocked[x%P] {
					return false
				}
			}
			return true
		}
		now := 0 // earliest start of the next block
		for k, i := range blocks {
			now += lags[k]
			s := now
			if !barrier[i] {
				t := p.Blocks[i].Time
				if k == 0 && !free(0, t) {
					return // i starts at 0 by the shift: not this choice
				}
				for lim := s + P; s < lim && !free(s, t); s++ {
				}
				if !free(s, t) {
					return // the block fits nowhere
				}
				if k == len(blocks)-1 {
					best = min(best, s)
					return
				}
				now = s + t
				continue
			}
			if k == len(blocks)-1 {
				best = min(best, s)
				return
			}
		}
	}
	try = func(from, left int) {
		if left == 0 {
			run()
			return
		}
		for x := from; x <= P-left; x++ {
			blocked[x] = true
			try(x+1, left-1)
			blocked[x] = false
		}
	}
	try(0, B)
	return best
}

// binomial is C(n, k), saturated at maxPatterns+1.
func binomial(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	c := 1
	for x := 1; x <= k; x++ {
		c = c * (n - k + x) / x
		if c > maxPatterns {
			return maxPatterns + 1
		}
	}
	return c
}

// RepetendBubbleRate is (D·P − Σ_d load_d) / (D·P): the bubble rate of a
// repetend schedule with period P as the number of micro-batches grows.
// It is 0 for a period below 1.
func RepetendBubbleRate(p *placement.Placement, period int) float64 {
	if period < 1 {
		return 0
	}
	busy := 0
	for _, l := range p.Loads() {
		busy += l
	}
	total := float64(p.Devices) * float64(period)
	return (total - float64(busy)) / total
}

// roundRate rounds a rate to 6 decimals, as schedule files store it.
func roundRate(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// ceilDiv is ⌈a / b⌉ for a ≥ 0, b ≥ 1.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
