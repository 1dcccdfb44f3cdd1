package pairs

import "github.com/tessel-pp/tessel/spec"

// Relax is the spec whose bounds give sp's where forwards and backwards
// may overlap (placement's Overlap): sp on a relaxed placement without
// Overlap, every time scaled by k (bound.Of divides its bounds by k
// again).
//
// Proof. Let k be the largest sum of block times of an allowed pair
// group. In the relaxed placement every time and transfer is k times the
// placement's, except that a block of some allowed group G (time T_G,
// block times summing to Σ_G) takes lb_b = the least over its groups of
// min(k·t_b, ⌊k·T_G·t_b/Σ_G⌋) ≥ 1, so that a group's lb sum to at most
// k·T_G. Any schedule of the placement, its pairs included, becomes one
// of the relaxed placement: scale every start by k, run an unpaired
// instance for its lb ≤ k·t, and a pair's instances one after another in
// the pair's order (the forward, the backward, its weight) inside the
// pair's interval [k·s, k·s + k·T): every dependency still holds (a
// pair's successors start after k·s + k·T), a device runs one instance at
// a time, and each device runs its instances in the same order with the
// forward's memory before the backward's, as the verifier counts a pair,
// so memory is the same. Its makespan is at most k times the schedule's;
// the relaxed bounds hold for it, so ⌈bound/k⌉ holds for the schedule.
func (Rule) Relax(sp spec.Spec) (spec.Spec, int) {
	p := sp.Placement
	type group struct {
		blocks []int
		t, sum int
	}
	var groups []group
	k := 1
	all, times := p.OverlapGroups()
	for x, blocks := range all {
		sum := 0
		for _, b := range blocks {
			sum += p.Blocks[b].Time
		}
		groups = append(groups, group{blocks, times[x], sum})
		k = max(k, sum)
	}
	q := p.Clone()
	q.Overlap = nil
	for i := range q.Blocks {
		q.Blocks[i].Time *= k
		q.Blocks[i].Offload *= k
	}
	for d, c := range q.Transfers {
		q.Transfers[d] = c * k
	}
	for _, g := range groups {
		for _, b := range g.blocks {
			share := max(1, k*g.t*p.Blocks[b].Time/g.sum)
			q.Blocks[b].Time = min(q.Blocks[b].Time, share)
		}
	}
	relaxed := sp
	relaxed.Placement = q
	return relaxed, k
}
