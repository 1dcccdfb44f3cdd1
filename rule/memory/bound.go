package memory

import (
	"math"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// By names the memory budget's argument of the makespan bound.
const By bound.MakespanBound = "the memory budget"

// Bound raises b by the memory budget M_d (placement's Budget): at
// bound.Loads the period to the least the budget does not rule out
// (memoryPeriod), from the period so far; at bound.Path the makespan by
// max_d of the memory bound (memoryBound): a device that holds A of one
// micro-batch's memory for at least ℓ holds it for at most ⌊M/A⌋
// micro-batches at a time. Where the placement lets activations be
// offloaded or recomputed (placement's Offloadable, Recomputable), a
// micro-batch need not hold its memory that long, and that bound is left
// out for areaBound, at bound.Devices, which counts memory-time, the host
// channel's load and the recomputes' device time from the bound so far.
func (Rule) Bound(sp spec.Spec, at bound.Step, b *bound.Bounds) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	decides := p.HasOffload() || p.HasRecompute()
	switch {
	case at == bound.Loads:
		b.Period = memoryPeriod(p, memory, b.Period)
	case at == bound.Path && !decides:
		b.Raise(memoryBound(p, n, memory), By)
	case at == bound.Devices && decides:
		b.Raise(areaBound(p, n, memory, b.Makespan), By)
	}
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
	barrier := bound.Barriers(p)
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
	if B == 0 {
		// Nothing is blocked: each path's least span is its length
		// whatever P is, so the first P is found at once rather than
		// one step at a time (a placement in real units has fine steps).
		P := lower
		for _, h := range holds {
			P = max(P, (minHold(p, h, barrier, lower, 0)+h.c-1)/h.c)
		}
		return P
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
			if minHold(p, h, barrier, P, B) > h.c*P {
				ok = false
				break
			}
		}
		if ok {
			return P
		}
	}
}

// hold is a path of blocks (with the transfer lags before each) that a
// micro-batch holds its peak memory along, on a device that holds it for
// at most c micro-batches at a time (memoryPeriod).
type hold struct {
	blocks, lags []int
	c            int
}

// minHold is the least start of the path h's last block, the first
// starting at 0, over every choice of B blocked slots of P (memoryPeriod).
func minHold(p *placement.Placement, h hold, barrier []bool, P, B int) int {
	blocks, lags := h.blocks, h.lags
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
