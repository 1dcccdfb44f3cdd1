package memory

import (
	"sort"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
)

// areaBound is a makespan bound under the memory budget where the
// placement lets activations be offloaded or recomputed (where the memory
// bound, which assumes they stay, does not hold). It counts memory-time:
// on a device whose memory is only activations — every block's memory 0
// except forwards with m > 0, each freed by exactly one block on the
// device with −m — the running memory at any time is the sum of the live
// activations, so over a schedule of makespan T
//
//	Σ m·(time each activation is on the device) ≤ budget·T.
//
// An activation kept lives at least the longest path from its forward's
// start to its freeing block's start; offloaded, at least t_f + 2·offload
// time + the path from its consumer to the freeing block; recomputed,
// its checkpoint as if kept and the rest 2·t_f + that path. An offload
// costs 2·offload time on the device's host channel, which carries at
// most T of them (one at a time, the host channel's load counted like a
// device's); a recompute costs t_f more busy time on the device, whose
// load, head and tail leave T − (head + n·load + tail) for them. The
// savings of both are bounded by fractional knapsacks (each resource on
// its own, which can only overestimate them), and the bound is the least
// T at which the activations fit: for every such device, the largest.
func areaBound(p *placement.Placement, n, memory, lo int) int {
	if n <= 0 {
		return 0
	}
	consumers := p.Consumers()
	pairs := p.Pairs()
	dist := bound.PathLengths(p)
	heads, tails := p.Heads(), p.Tails()
	loads := p.Loads()
	best := 0
	for d, on := range p.DeviceBlocks() {
		budget := p.Budget(d, memory)
		if budget <= 0 {
			continue
		}
		type act struct {
			m, keep       int // memory, least life kept
			offLife, move int // offloaded: least life, channel time (0: not offloadable)
			recArea, t    int // recomputed: least memory-time, extra device time (0: not recomputable)
		}
		var acts []act
		ok := true
		freed := map[int]bool{}
		for _, i := range on {
			b := p.Blocks[i]
			if b.Memory == 0 {
				continue
			}
			if b.Kind != placement.Forward || b.Memory < 0 || len(b.Devices) != 1 {
				if b.Memory < 0 && freed[i] {
					continue
				}
				if b.Memory < 0 {
					// A freeing block not yet matched: matched below
					// when its forward is seen; order of on is by index.
					continue
				}
				ok = false
				break
			}
			// The freeing block: a gradient block paired with i on d
			// whose memory is −m.
			fr := -1
			for g, f := range pairs {
				if f == i && p.Blocks[g].Memory == -b.Memory && p.OnDevice(g, d) {
					fr = g
				}
			}
			c := consumers[i]
			if fr < 0 || c < 0 || dist[i][fr] < 0 || dist[c][fr] < 0 {
				ok = false
				break
			}
			freed[fr] = true
			a := act{m: b.Memory, keep: dist[i][fr]}
			if p.Offloadable(i, consumers) {
				a.move = 2 * p.OffloadTime(i)
				a.offLife = b.Time + a.move + dist[c][fr]
			}
			if p.Recomputable(i, consumers) {
				a.t = b.Time
				a.recArea = b.Checkpoint*a.keep + (b.Memory-b.Checkpoint)*(2*b.Time+dist[c][fr])
			}
			acts = append(acts, a)
		}
		// Every negative block must free a forward's activation.
		for _, i := range on {
			if p.Blocks[i].Memory < 0 && !freed[i] {
				ok = false
			}
		}
		if !ok || len(acts) == 0 {
			continue
		}
		minHead, minTail := heads[on[0]], tails[on[0]]
		for _, i := range on {
			minHead, minTail = min(minHead, heads[i]), min(minTail, tails[i])
		}
		area := 0
		for _, a := range acts {
			area += n * a.m * a.keep
		}
		// savings is the most memory-time the decisions can save with
		// channel time c and device time r (fractional knapsacks).
		savings := func(c, r int) float64 {
			type item struct{ gain, cost float64 }
			knap := func(items []item, cap float64) float64 {
				sort.Slice(items, func(x, y int) bool { return items[x].gain*items[y].cost > items[y].gain*items[x].cost })
				total := 0.0
				for _, it := range items {
					if cap <= 0 {
						break
					}
					take := min(cap, it.cost)
					total += it.gain * take / it.cost
					cap -= take
				}
				return total
			}
			var offs, recs []item
			for _, a := range acts {
				if a.move > 0 && a.keep > a.offLife {
					offs = append(offs, item{float64(n * a.m * (a.keep - a.offLife)), float64(n * a.move)})
				}
				if a.t > 0 && a.m*a.keep > a.recArea {
					recs = append(recs, item{float64(n * (a.m*a.keep - a.recArea)), float64(n * a.t)})
				}
			}
			return knap(offs, float64(c)) + knap(recs, float64(r))
		}
		fits := func(T int) bool {
			r := max(0, T-(minHead+n*loads[d]+minTail))
			return float64(area)-savings(T, r) <= float64(budget)*float64(T)
		}
		// The least T that fits, from lo (a bound already proven).
		hi := max(lo, 1)
		for !fits(hi) {
			hi *= 2
		}
		l := lo
		for l < hi {
			mid := l + (hi-l)/2
			if fits(mid) {
				hi = mid
			} else {
				l = mid + 1
			}
		}
		best = max(best, hi)
	}
	return best
}
