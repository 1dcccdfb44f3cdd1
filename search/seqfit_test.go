package search

import "github.com/tessel-pp/tessel/placement"

// sequentialFits reports whether running n micro-batches of p one after
// another, each in one dependency order of its blocks (the same for all),
// keeps every device within the memory budget (0: unlimited). It tries
// every dependency order, so it is for small placements only: an
// independent check, without the solver or the constructions, that some
// schedule of n micro-batches fits.
func sequentialFits(p *placement.Placement, n, memory int) bool {
	if memory <= 0 {
		return true
	}
	k := len(p.Blocks)
	preds := make([]int, k)
	for _, d := range p.Deps {
		preds[d.To] |= 1 << d.From
	}
	net := make([]int, p.Devices)
	for _, b := range p.Blocks {
		for _, d := range b.Devices {
			net[d] += b.Memory
		}
	}
	// fits says whether an order whose prefix peaks at peak[d] (running
	// sum within one micro-batch) holds for every micro-batch m < n,
	// which starts on d at m·net[d].
	fits := func(peak []int) bool {
		for d := range peak {
			base := 0
			if net[d] > 0 {
				base = (n - 1) * net[d]
			}
			if base+peak[d] > memory || base > memory {
				return false
			}
		}
		return true
	}
	var try func(done int, sum, peak []int) bool
	try = func(done int, sum, peak []int) bool {
		if done == 1<<k-1 {
			return fits(peak)
		}
		for i := 0; i < k; i++ {
			if done&(1<<i) != 0 || preds[i]&^done != 0 {
				continue
			}
			s, pk := append([]int(nil), sum...), append([]int(nil), peak...)
			for _, d := range p.Blocks[i].Devices {
				s[d] += p.Blocks[i].Memory
				pk[d] = max(pk[d], s[d])
			}
			if try(done|1<<i, s, pk) {
				return true
			}
		}
		return false
	}
	return try(0, make([]int, p.Devices), make([]int, p.Devices))
}
