package schedule

import (
	"fmt"
	"math"
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
	for _, in := range s.Instances {
		if in.Block >= 0 && in.Block < len(s.Placement.Blocks) {
			ms = max(ms, in.Start+s.Placement.Blocks[in.Block].Time)
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
	for d, xs := range xs {
		for _, x := range xs {
			m.Loads[d] += p.Blocks[s.Instances[x].Block].Time
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
	m.LowerBound = LowerBounds(p, s.MicroBatches, s.Memory)
	return m
}

// LowerBounds returns lower bounds for n micro-batches of p (which must be
// valid). Period = max_d load_d: a repetend runs every block once on each
// device. Makespan is the largest of:
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
	}
	return fmt.Sprintf("MakespanBound(%d)", int(b))
}

// LowerBoundsBy is LowerBounds and the argument that gives the makespan
// bound (the first to reach it, in the order listed there, links first).
func LowerBoundsBy(p *placement.Placement, n, memory int) (Bounds, MakespanBound) {
	b := Bounds{Period: p.MaxLoad()}
	by := BoundCriticalPath
	heads, tails := p.Heads(), p.Tails()
	if p.Channels {
		b = linkBounds(p, n, b, heads, tails)
		by = BoundLinkLoad
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

// linkBounds raises b by the links' loads (see LowerBounds).
func linkBounds(p *placement.Placement, n int, b Bounds, heads, tails []int) Bounds {
	type link struct{ load, head, tail int }
	links := map[placement.Link]*link{}
	var order []placement.Link // first seen, for a deterministic walk
	for _, d := range p.Deps {
		c := p.Transfer(d)
		for _, l := range p.Links(d) {
			x := links[l]
			if x == nil {
				x = &link{head: math.MaxInt, tail: math.MaxInt}
				links[l] = x
				order = append(order, l)
			}
			x.load += c
			x.head = min(x.head, heads[d.From]+p.Blocks[d.From].Time)
			x.tail = min(x.tail, p.Blocks[d.To].Time+tails[d.To])
		}
	}
	for _, l := range order {
		x := links[l]
		b.Period = max(b.Period, x.load)
		b.Makespan = max(b.Makespan, x.head+n*x.load+x.tail)
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
	succs := p.SuccDeps()
	// dist returns the longest start-to-start path from a to b, or -1.
	dist := func(a, b int) int {
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
	best := 0
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
		if !chain || peak <= 0 || peak > memory || memory/peak >= n {
			continue
		}
		c := memory / peak
		sum = 0
		for k, i := range on {
			sum += p.Blocks[i].Memory
			if sum != peak || (k > 0 && sum-p.Blocks[i].Memory == peak) {
				continue
			}
			// i brings the micro-batch to its peak; the interval ends
			// at the next block that lowers it.
			rest := sum
			for _, j := range on[k+1:] {
				rest += p.Blocks[j].Memory
				if rest < peak {
					l := dist(i, j)
					best = max(best, heads[i]+(n*l+c-1)/c+p.Blocks[j].Time+tails[j])
					break
				}
			}
		}
	}
	return best
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
