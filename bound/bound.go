// Package bound holds the lower bounds of a problem (a spec.Spec): of the
// period of a repetend and of the makespan of N micro-batches, and which
// argument gives the makespan's. Every search reports its result beside
// them, and a result that meets them is proven. They are a function of
// the spec alone — no schedule is needed — so the schedule's metrics
// (package schedule) report them too.
//
// Each rule of the timing model bounds in its own file: the devices and
// the critical path (bound.go), the blocks on every device (barriers.go),
// links that carry one transfer at a time (links.go), the memory budget
// (memory.go), offload and recompute (decisions.go), the latency budget
// (latency.go) and overlapped pairs (pairs.go).
package bound

import (
	"fmt"
	"math"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// Bounds are lower bounds that no schedule of the placement can beat.
type Bounds struct {
	Period   int // of a repetend: max_d load_d of one micro-batch
	Makespan int // of N micro-batches; see LowerBounds
	// By names the argument that gives Makespan (the first to reach it,
	// in the order LowerBounds lists them).
	By MakespanBound
}

// LowerBounds returns lower bounds for the spec's n micro-batches of its
// placement p (which must be valid), under its memory budget and its
// latency budget. Period ≥ max_d load_d: a repetend runs every block once on each
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
//   - under a latency budget (0: none), latencyBarrierBound
//     (BoundLatency) where it is larger.
//
// Where forwards and backwards may overlap (placement's Overlap) the
// bounds are those of a relaxed placement (overlapBounds). For n ≤ 0 the
// makespan bound is 0. By names the argument that gives the makespan
// bound: the first to reach it, in the order listed here, links first.
func LowerBounds(sp spec.Spec) Bounds {
	b := lowerBounds(sp.Placement, sp.MicroBatches, sp.Memory)
	if sp.Latency > 0 && sp.MicroBatches > 0 {
		if v := latencyBarrierBound(sp.Placement, sp.MicroBatches, sp.Latency); v > b.Makespan {
			b.Makespan, b.By = v, BoundLatency
		}
	}
	return b
}

// lowerBounds is LowerBounds without a latency budget.
func lowerBounds(p *placement.Placement, n, memory int) Bounds {
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
		b.By = BoundCriticalPath
		return b
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
	b.By = by
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
	// barriers (latencyBarrierBound).
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

// ceilDiv is ⌈a / b⌉ for a ≥ 0, b ≥ 1.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
