package bound

import (
	"math"

	"github.com/tessel-pp/tessel/placement"
)

// Barriers marks the barrier blocks of p: those that run on every
// device (and so hold all of them at once). The memory budget's period
// and the latency budget's bound read them too.
func Barriers(p *placement.Placement) []bool {
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
	barrier := Barriers(p)
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
