package schedule

import (
	"fmt"

	"github.com/tessel-pp/tessel/placement"
)

// Need is the least memory one device needs under any schedule of a
// placement: what one micro-batch's blocks hold there at their peak.
type Need struct {
	Device int
	Memory int // in the placement's memory units
	// Proven says Memory is a lower bound on every schedule's peak there
	// (LeastMemory); Exact that it is also the least budget under which a
	// schedule exists (one micro-batch at a time reaches it).
	Proven, Exact bool
	// Block is the block at whose start the peak falls (its index; -1
	// for none).
	Block int
}

// LeastMemory is, for every device, the least memory any schedule of p
// needs there (Need), with the activations kept, or, with offload or
// recompute allowed, each allowed one dropped to what it keeps (nothing
// offloaded, its checkpoint recomputed) from its forward's end until its
// consumer's start.
//
// One micro-batch's blocks on a device start in some order that the
// dependencies allow; at every step it holds what its started blocks
// allocated and did not free (a forward dropped until its consumer
// starts, and back in full just before). The least, over those orders,
// of the largest such holding is a lower bound on every schedule's peak
// there: when the first micro-batch reaches its largest holding, every
// other holds what it started, never less than nothing where no set of
// started blocks holds less (else the device is not Proven and needs its
// largest block). It is found over the sets of blocks that may have
// started (a dynamic program over them, up to maxIdeals per device).
// Where, with the activations kept and each micro-batch freeing all it
// allocates, one micro-batch after another in p's topological order
// (placement's Topo) reaches it, the bound is Exact. A device with
// nothing to hold needs 0.
func LeastMemory(p *placement.Placement, offload, recompute bool) []Need {
	order, ok := p.Topo()
	out := make([]Need, p.Devices)
	for d := range out {
		out[d] = Need{Device: d, Block: -1}
	}
	if !ok {
		return out
	}
	reach := p.Reach()
	consumers := p.Consumers()
	// kept is what a forward's activation may be dropped to; back[c]
	// the forward whose activation consumer c needs back in full.
	kept := make([]int, p.K())
	back := make([]int, p.K())
	for i := range back {
		back[i] = -1
	}
	for i, b := range p.Blocks {
		kept[i] = b.Memory
		if offload && p.Allows(i, placement.Offload, consumers) {
			kept[i] = 0
		}
		if recompute && p.Allows(i, placement.Recompute, consumers) {
			kept[i] = min(kept[i], b.Checkpoint)
		}
		if kept[i] < b.Memory {
			back[consumers[i]] = i
		}
	}
	facts := deviceFacts{p: p, reach: reach, consumers: consumers, kept: kept, backs: back}
	for d := range out {
		var mine []int
		for _, i := range order {
			if p.OnDevice(i, d) {
				mine = append(mine, i)
			}
		}
		out[d] = facts.onDevice(d, mine)
		if out[d].Exact {
			out[d].Exact = !offload && !recompute
		}
	}
	return out
}

// maxIdeals bounds the sets of started blocks LeastMemory walks on one
// device; beyond it the device needs its largest block, unproven.
const maxIdeals = 1 << 16

// deviceFacts is what LeastMemory knows of the placement p for every
// device: which block reaches which, each forward's consumer, the memory
// each block keeps at least, and the forward each backward frees (-1:
// none).
type deviceFacts struct {
	p                      *placement.Placement
	reach                  placement.Reach
	consumers, kept, backs []int
}

// onDevice is LeastMemory's Need of device d, whose blocks are mine in a
// topological order.
func (f deviceFacts) onDevice(d int, mine []int) Need {
	p, reach, consumers, kept, backs := f.p, f.reach, f.consumers, f.kept, f.backs
	x := Need{Device: d, Block: -1}
	// In mine's order (every micro-batch one after another in one
	// topological order), the device holds at most seq.
	largest, total, seq := 0, 0, 0
	for _, i := range mine {
		if m := p.Blocks[i].Memory; m > largest {
			largest, x.Block = m, i
		}
		total += p.Blocks[i].Memory
		seq = max(seq, total)
	}
	x.Memory = largest
	if len(mine) == 0 || len(mine) > 64 {
		return x
	}
	// pred[k]: the blocks of mine that block k depends on, as a set.
	pos := map[int]int{}
	for k, i := range mine {
		pos[i] = k
	}
	backOf := make([]int, len(mine))
	for k, i := range mine {
		backOf[k] = -1
		if f := backs[i]; f >= 0 {
			if kf, ok := pos[f]; ok {
				backOf[k] = kf
			}
		}
	}
	pred := make([]uint64, len(mine))
	for k, i := range mine {
		for j, a := range mine[:k] {
			if reach.Has(a, i) {
				pred[k] |= 1 << j
			}
		}
	}
	// add is what starting block k adds to what a set of started blocks
	// holds: a consumer first brings its forward back in full (back);
	// then the block takes its memory (start), and keeps it, or what it
	// is dropped to from its end until its consumer starts (after).
	add := func(k int, set uint64) (back, start, after int) {
		i := mine[k]
		if f := backOf[k]; f >= 0 && set&(1<<f) != 0 {
			back = p.Blocks[mine[f]].Memory - kept[mine[f]]
		}
		start = back + p.Blocks[i].Memory
		after = start
		if c := consumers[i]; c >= 0 && backs[c] == i {
			after = back + kept[i]
		}
		return back, start, after
	}
	// best[set]: the least largest holding of an order that starts
	// exactly set; held[set] what set holds; at[set] the block where the
	// largest holding falls.
	best := map[uint64]int{0: 0}
	held := map[uint64]int{0: 0}
	at := map[uint64]int{0: -1}
	layer := []uint64{0}
	for range mine {
		var next []uint64
		for _, set := range layer {
			h := held[set]
			if h < 0 {
				return x // a set of started blocks holds less than nothing
			}
			for k := range mine {
				if set&(1<<k) != 0 || pred[k]&^set != 0 {
					continue
				}
				back, start, after := add(k, set)
				peak, where := best[set], at[set]
				if v := h + max(back, start); v > peak {
					peak, where = v, mine[k]
				}
				grown := set | 1<<k
				if old, seen := best[grown]; !seen || peak < old {
					if !seen {
						if len(best) >= maxIdeals {
							return x
						}
						next = append(next, grown)
						held[grown] = h + after
					}
					best[grown], at[grown] = peak, where
				}
			}
		}
		layer = next
	}
	all := ^uint64(0) >> (64 - len(mine))
	if held[all] < 0 {
		return x
	}
	x.Memory, x.Block, x.Proven = best[all], at[all], true
	x.Exact = total == 0 && seq == x.Memory
	return x
}

// Short is the device whose budget under memory (placement's Budget) is
// below its least need (LeastMemory), the one short by most, among the
// Proven needs alone where proven is set; ok is false when every
// device's budget covers its need.
func Short(p *placement.Placement, memory int, needs []Need, proven bool) (need Need, budget int, ok bool) {
	gap := 0
	for _, x := range needs {
		b := p.Budget(x.Device, memory)
		if (proven && !x.Proven) || b <= 0 {
			continue
		}
		if x.Memory > b && x.Memory-b > gap {
			need, budget, ok, gap = x, b, true, x.Memory-b
		}
	}
	return need, budget, ok
}

// NeedText says what a device needs and has: "device 5 needs 43 per
// micro-batch (at the start of f5), 20 left", amounts written by amount
// (nil: the placement's units).
func NeedText(p *placement.Placement, need Need, budget int, amount func(units int) string) string {
	if amount == nil {
		amount = func(x int) string { return fmt.Sprint(x) }
	}
	at := ""
	if need.Block >= 0 {
		at = fmt.Sprintf(" (at the start of %s)", p.Blocks[need.Block].ID)
	}
	least := "needs"
	if !need.Exact {
		least = "needs at least"
	}
	return fmt.Sprintf("device %d %s %s per micro-batch%s, %s left", need.Device, least, amount(need.Memory), at, amount(budget))
}
