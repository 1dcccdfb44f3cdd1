package bound

import (
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// HostChannel is a makespan bound for schedules that may offload
// activations but not recompute them, from one device's host channel and
// memory together (0 where no device qualifies). It applies to a device
// whose memory is only activations of one size μ, each of a single-device
// forward that may be offloaded, all with one move time o, each freed by
// its paired block on the device, which starts at least one step after its
// consumer starts; S = ⌊budget/μ⌋ activations fit at once.
//
// With n micro-batches the device has A = n·(its forwards) activations,
// of which K are kept and A − K moved. Three facts hold in every schedule
// of makespan T (the verifier's rules, placement's "Memory as a
// decision"):
//
//   - Channel window. Every move lies in CW = [c₀, T − c₁): an offload
//     starts after its forward ends (c₀, the least head + time of the
//     device's forwards) and a reload ends before its consumer starts
//     (c₁, the least time + tail of their consumers). The channel carries
//     one move at a time: 2o·(A − K) ≤ |CW| − loss.
//   - Memory window. An activation is on the device from its forward's
//     start (≥ m₀, the least head of the forwards) past its consumer's end
//     (≤ T − m₁, the least tail of the consumers): kept, at least the
//     path from its forward's start to its consumer's end; moved, at least
//     t_f + o before the offload ends and o + t_c from the reload's start.
//     Their sum, times μ, is at most budget·(T − m₀ − m₁).
//   - Loss. Let κ(t) count the kept activations on the device at step t,
//     and e(t) = max(0, κ(t) − (S − 2)). Where e = 2 the memory is full
//     of kept activations, so no move runs (a move's activation is on the
//     device while it moves). Where e = 1 one more activation fits: the
//     moved activations on the device there follow one another, each
//     stay (forward and offload, or reload and the steps to its freeing
//     block) holding one move of o and at least one step without a move.
//     On a stretch C of steps with e ≥ 1 the channel is then busy at most
//     o/(o+1) of the steps with e = 1 plus 2o for the stays cut by C's
//     ends, so it loses at least (Σ_C e − 2o)/(o+1) steps. The stretches
//     are at most K (each begins where a kept activation arrives; one
//     when S = 1, where e ≥ 1 everywhere), and Σ e over CW is at least
//     Σ (each kept activation's stay inside CW) − (S − 2)·|CW|.
//
// For each K the kept activations are taken to be the ones that cost
// least, for the memory and for the loss each on its own (which can only
// help them fit), and the bound is the least T at which some K fits all
// three, the largest over the devices. On the memory experiment's V
// placement (8 devices, moves of 2, 16 micro-batches) at memory 2 the last
// device gives 145: a kept activation's 16 steps there cost the channel as
// many steps as its two moves would have taken.
func HostChannel(sp spec.Spec) int {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	if p == nil || n <= 0 || !p.Limited(memory) || p.Overlap != nil {
		return 0
	}
	best := 0
	for d := range p.DeviceBlocks() {
		if dv, ok := newChannelDevice(p, d, n, memory, sp.Allowed.Recompute); ok {
			best = max(best, dv.least())
		}
	}
	return best
}

// channelDevice is what HostChannel knows of one device.
type channelDevice struct {
	n, slots, move, budget, mu int
	c0, c1, m0, m1             int
	// Per forward block of the device: memory-time kept and moved
	// (μ·steps), and the least stay of a kept one inside the channel
	// window, given as its least stay and its clips at either end.
	keptArea, movedArea []int
	stay                []int
}

// newChannelDevice reads device d, or reports that HostChannel does not
// apply to it.
func newChannelDevice(p *placement.Placement, d, n, memory int, recompute bool) (channelDevice, bool) {
	dv := channelDevice{n: n, budget: p.Budget(d, memory)}
	if dv.budget <= 0 {
		return dv, false
	}
	consumers, pairs := p.Consumers(), p.Pairs()
	heads, tails := p.Heads(), p.Tails()
	dist := pathLengths(p)
	on := p.DeviceBlocks()[d]
	type fwd struct{ i, c int }
	var fwds []fwd
	freed := map[int]bool{}
	for _, i := range on {
		b := p.Blocks[i]
		if b.Memory <= 0 {
			continue
		}
		if !p.Offloadable(i, consumers) || (recompute && p.Recomputable(i, consumers)) || len(b.Devices) != 1 {
			return dv, false
		}
		if dv.mu == 0 {
			dv.mu, dv.move = b.Memory, p.OffloadTime(i)
		}
		if b.Memory != dv.mu || p.OffloadTime(i) != dv.move {
			return dv, false
		}
		c, fr := consumers[i], -1
		for g, f := range pairs {
			if f == i && p.Blocks[g].Memory == -b.Memory && p.OnDevice(g, d) && !freed[g] {
				fr = g
			}
		}
		// The freeing block must start a step or more after the
		// consumer: a reloaded activation then stays a step without a
		// move (the loss's argument).
		if fr < 0 || dist[i][c] < 0 || dist[c][fr] < 1 {
			return dv, false
		}
		freed[fr] = true
		fwds = append(fwds, fwd{i, c})
	}
	for _, i := range on {
		if m := p.Blocks[i].Memory; m < 0 && !freed[i] {
			return dv, false
		}
	}
	if len(fwds) == 0 || dv.move <= 0 {
		return dv, false
	}
	dv.slots = dv.budget / dv.mu
	if dv.slots <= 0 {
		return dv, false
	}
	first := true
	for _, f := range fwds {
		b, cb := p.Blocks[f.i], p.Blocks[f.c]
		if first {
			dv.c0, dv.c1, dv.m0, dv.m1 = heads[f.i]+b.Time, cb.Time+tails[f.c], heads[f.i], tails[f.c]
			first = false
		}
		dv.c0, dv.c1 = min(dv.c0, heads[f.i]+b.Time), min(dv.c1, cb.Time+tails[f.c])
		dv.m0, dv.m1 = min(dv.m0, heads[f.i]), min(dv.m1, tails[f.c])
	}
	for _, f := range fwds {
		b, cb := p.Blocks[f.i], p.Blocks[f.c]
		kept := dist[f.i][f.c] + cb.Time
		dv.keptArea = append(dv.keptArea, dv.mu*kept)
		dv.movedArea = append(dv.movedArea, dv.mu*(b.Time+2*dv.move+cb.Time))
		// Inside CW: the stay [start, consumer's end) begins at or after
		// heads and ends by T − tails, so at most c₀ − head before CW
		// and c₁ − tail after it.
		dv.stay = append(dv.stay, max(0, kept-max(0, dv.c0-heads[f.i])-max(0, dv.c1-tails[f.c])))
	}
	return dv, true
}

// least is the least T at which the device fits (fits is monotone in T).
func (dv channelDevice) least() int {
	lo := dv.c0 + dv.c1
	hi := max(lo, 1)
	for !dv.fits(hi) {
		hi *= 2
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if dv.fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// fits reports whether some number K of kept activations meets the
// channel, the memory and the loss at makespan T.
func (dv channelDevice) fits(T int) bool {
	cw, mw := T-dv.c0-dv.c1, T-dv.m0-dv.m1
	if cw < 0 || mw < 0 {
		return false
	}
	k := len(dv.stay)
	total := dv.n * k
	// The K cheapest for the memory (extra area of keeping over moving)
	// and the K shortest stays for the loss, each taken on its own:
	// blocks sorted once, every micro-batch of a block alike.
	extra := make([]int, k)
	for j := range extra {
		extra[j] = dv.keptArea[j] - dv.movedArea[j]
	}
	byExtra, byStay := sortedBy(extra), sortedBy(dv.stay)
	moved := 0
	for j := range k {
		moved += dv.n * dv.movedArea[j]
	}
	o := dv.move
	for K := 0; K <= total; K++ {
		area := moved + takeLeast(extra, byExtra, dv.n, K)
		if area > dv.budget*mw {
			// Keeping more only adds area where extra ≥ 0; keep going
			// where some extra is negative.
			if extra[byExtra[0]] >= 0 {
				return false
			}
			continue
		}
		stays := takeLeast(dv.stay, byStay, dv.n, K)
		stretches := K
		if dv.slots == 1 {
			stretches = 1
		}
		e := stays - (dv.slots-2)*cw
		loss := 0
		if v := e - 2*o*stretches; v > 0 {
			loss = (v + o) / (o + 1)
		}
		if 2*o*(total-K) <= cw-loss {
			return true
		}
	}
	return false
}

// sortedBy is the indices of v, least value first (stable).
func sortedBy(v []int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	for a := 1; a < len(idx); a++ {
		for b := a; b > 0 && v[idx[b]] < v[idx[b-1]]; b-- {
			idx[b], idx[b-1] = idx[b-1], idx[b]
		}
	}
	return idx
}

// takeLeast is the sum of the K least values when every value of v
// comes n times (order: v's indices, least value first).
func takeLeast(v, order []int, n, K int) int {
	sum := 0
	for _, j := range order {
		if K <= 0 {
			break
		}
		t := min(K, n)
		sum += t * v[j]
		K -= t
	}
	return sum
}
