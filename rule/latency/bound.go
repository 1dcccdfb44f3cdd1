package latency

import (
	"math"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// By names the latency budget's argument of the makespan bound.
const By bound.MakespanBound = "the latency budget, with blocks on all devices as barriers"

// Bound raises b, at bound.Given (on the spec as given, after every other
// argument), by latencyBarrierBound where it is larger.
func (Rule) Bound(sp spec.Spec, at bound.Step, b *bound.Bounds) {
	if at == bound.Given && sp.Latency > 0 {
		b.Raise(latencyBarrierBound(sp.Placement, sp.MicroBatches, sp.Latency), By)
	}
}

// latencyBarrierBound is a makespan bound of n micro-batches under the
// latency budget L, from the blocks that span every device (barriers):
// 0 where there are none or the budget admits any number of them.
//
// Proof. Micro-batch m runs within [a_m, e_m], e_m − a_m ≤ L. Cut the
// barriers out of the time line as in the barriers' bound (package
// bound; c(t), the time before t that no barrier runs): the
// micro-batch's non-barrier blocks
// keep their lengths along every dependency path, so c(e_m) − c(a_m) ≥
// CP', the longest path of non-barrier block times (transfers and
// barriers 0), and the barrier time inside [a_m, e_m] is at most L − CP'.
// A barrier instance that starts in [a_m, e_m) ends by e_m (it cannot
// overlap m's last instance on any device), so at most C = ⌊(L − CP') /
// b⌋ barrier instances start in [a_m, e_m), b the least barrier time.
// Sort the N·k barrier instances (k per micro-batch) by start, σ_1 <
// σ_2 < … (two barriers never overlap). For instance i, of block β of
// micro-batch m, let c ∈ [1, C] be the number that start in [σ_i, e_m):
// they are i … i+c−1, the next starts at e_m or later, and
//
//	σ_{i+c} ≥ e_m ≥ σ_i + t_β + tail'_β + (c − 1)·b =: σ_i + g(c),
//
// tail' the longest path after β of non-barrier times (its own barrier
// and the c − 1 others lie in [σ_i, e_m], the rest is cut time). So
// σ_{1+j} − σ_1 ≥ G(j), G(0) = 0 and G(j) the least of j·b (where all
// j + 1 lie in one window, j + 1 ≤ C) and g(c) + G(j − c) for c ≤
// min(C, j): by induction on j, from instance 1. The makespan is at
// least the least head of a barrier, plus G(N·k − 1), plus the least
// time and tail of a barrier (after the last one).
//
// Queued links, offload and recompute. The proof asks only three things
// of a schedule: (a) every dependency B_i → B_j of a micro-batch holds
// with start(B_j) ≥ end(B_i) + c_ij (the heads and tails use c_ij, the
// rest start ≥ end); (b) two instances that share a device never overlap
// (the N·k barrier instances among them); (c) a micro-batch's latency is
// its blocks' span. With links that carry one transfer at a time
// (rule/links; placement's LinkQueue), a tensor leaves no earlier than its
// producer's end and takes at least c_ij on its link (where a pair has
// several links, the least of their times, which is c_ij): waiting for a
// link only delays the consumer, so (a) holds. With offload and
// recompute, the dependencies hold as they are (a reload or a recompute
// only adds a later bound on the consumer's start), a recompute occupies
// its devices like a block, so (b) holds among the blocks and the
// barriers, and a recompute of a barrier block is one more interval of
// device time that the cut time c(t) may hold (it is not one of the N·k
// barriers counted); the verifier measures latency on the blocks alone
// (c). So the bound holds for every schedule the verifier accepts, with
// queued links, offloads and recomputes too; TestLatencyBoundValid and
// TestLatencyBoundValidOnQueuedLinks (package search) check it against
// proven optima.
func latencyBarrierBound(p *placement.Placement, n, latency int) int {
	order, ok := p.Topo()
	if !ok {
		return 0
	}
	barrier := bound.Barriers(p)
	per, least := 0, math.MaxInt
	for i, blk := range p.Blocks {
		if barrier[i] {
			per++
			least = min(least, blk.Time)
		}
	}
	if per == 0 || least <= 0 {
		return 0
	}
	t := func(i int) int {
		if barrier[i] {
			return 0
		}
		return p.Blocks[i].Time
	}
	// tail'[i]: the longest path after block i, non-barrier times only.
	succs := p.SuccDeps()
	tailC := make([]int, len(p.Blocks))
	cp := 0
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		for _, d := range succs[i] {
			tailC[i] = max(tailC[i], t(d.To)+tailC[d.To])
		}
		cp = max(cp, t(i)+tailC[i])
	}
	c := (latency - cp) / least
	if c < 1 {
		return 0 // below the critical path: CheckLatency says so
	}
	m := n * per
	if c >= m {
		return 0 // one window may hold every barrier: nothing to gain
	}
	d := math.MaxInt // least t_β + tail'_β
	heads, tails := p.Heads(), p.Tails()
	head, after := math.MaxInt, math.MaxInt
	for i := range p.Blocks {
		if barrier[i] {
			d = min(d, p.Blocks[i].Time+tailC[i])
			head = min(head, heads[i])
			after = min(after, p.Blocks[i].Time+tails[i])
		}
	}
	g := func(k int) int { return d + (k-1)*least }
	G := make([]int, m)
	for j := 1; j < m; j++ {
		best := math.MaxInt
		if j+1 <= c {
			best = j * least
		}
		for k := 1; k <= min(c, j); k++ {
			best = min(best, g(k)+G[j-k])
		}
		G[j] = best
	}
	return head + G[m-1] + after
}
