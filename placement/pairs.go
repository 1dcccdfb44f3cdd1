package placement

import "slices"

// Pairs returns, for every gradient block (backward, input, weight), the
// index of the forward block it differentiates, and -1 for forward blocks
// and unpaired gradient blocks. A forward block has at most one block that
// computes the gradient of its inputs (a backward or an input block) and
// at most one that computes its weights' gradient (the same backward, or a
// weight block).
//
// Gradient blocks are taken in topological order. A weight block whose
// direct predecessor on the same devices is an input block takes that
// block's forward (it uses what the input block kept). Any other gradient
// block is paired with the latest (in topological order) forward block on
// the same devices that it depends on, directly or not, and whose
// gradients it computes are still unpaired. On the built-in shapes this
// pairs b_s with f_s, and nn-shape's second shard backward with the second
// shard forward: backward runs the forward in reverse.
func (p *Placement) Pairs() []int {
	order, _ := p.Topo()
	rank := make([]int, len(p.Blocks))
	for r, i := range order {
		rank[i] = r
	}
	preds := p.Preds()
	// The forward blocks of each device set, latest (in topological
	// order) first: the candidates of a gradient block on that set.
	type group struct {
		forwards []int
		next     []int // union-find over positions: the next not fully paired
	}
	groups := map[string]*group{}
	fwd := make([]int, len(p.Blocks)) // a forward block's bit in the ancestor sets
	pos := make([]int, len(p.Blocks)) // and its position in its group
	nf := 0
	for k := len(order) - 1; k >= 0; k-- {
		if f := order[k]; !kindInfo(p.Blocks[f].Kind).Gradient {
			key := devicesKey(p.Blocks[f].Devices)
			g := groups[key]
			if g == nil {
				g = &group{}
				groups[key] = g
			}
			g.next = append(g.next, len(g.forwards))
			pos[f] = len(g.forwards)
			g.forwards = append(g.forwards, f)
			fwd[f] = nf
			nf++
		}
	}
	for _, g := range groups {
		g.next = append(g.next, len(g.forwards))
	}
	find := func(g *group, i int) int {
		for g.next[i] != i {
			g.next[i] = g.next[g.next[i]]
			i = g.next[i]
		}
		return i
	}
	// Ancestry: each block's set of forward ancestors as a bit set, built
	// in topological order and dropped once its last successor has it, so
	// that memory follows the width of the graph, not its blocks squared.
	words := (nf + 63) / 64
	var pool [][]uint64
	get := func() []uint64 {
		if n := len(pool); n > 0 {
			a := pool[n-1]
			pool = pool[:n-1]
			clear(a)
			return a
		}
		return make([]uint64, words)
	}
	left := make([]int, len(p.Blocks)) // successors yet to take the set
	for _, d := range p.Deps {
		left[d.From]++
	}
	anc := make([][]uint64, len(p.Blocks))
	pair := make([]int, len(p.Blocks))
	for i := range pair {
		pair[i] = -1
	}
	usedInput := make([]bool, len(p.Blocks))  // forward blocks whose input gradient is paired
	usedWeight := make([]bool, len(p.Blocks)) // and whose weight gradient is
	free := func(f int, k KindInfo) bool {
		return !(k.InputGradient && usedInput[f]) && !(k.WeightGradient && usedWeight[f])
	}
	for _, b := range order {
		var a []uint64
		for _, j := range preds[b] {
			if left[j]--; left[j] == 0 && a == nil && anc[j] != nil {
				a, anc[j] = anc[j], nil // b is the last to need it
			}
		}
		if a == nil {
			a = get()
		}
		for _, j := range preds[b] {
			if aj := anc[j]; aj != nil {
				for w := range aj {
					a[w] |= aj[w]
				}
				if left[j] == 0 {
					pool, anc[j] = append(pool, aj), nil
				}
			}
			if !kindInfo(p.Blocks[j].Kind).Gradient {
				a[fwd[j]/64] |= 1 << (fwd[j] % 64)
			}
		}
		if left[b] > 0 {
			anc[b] = a
		} else {
			pool = append(pool, a)
		}
		k := kindInfo(p.Blocks[b].Kind)
		if !k.Gradient {
			continue
		}
		best := -1
		if !k.InputGradient {
			for _, j := range preds[b] {
				jk := kindInfo(p.Blocks[j].Kind)
				if jk.InputGradient && !jk.WeightGradient && pair[j] >= 0 && free(pair[j], k) &&
					slices.Equal(p.Blocks[j].Devices, p.Blocks[b].Devices) {
					best = pair[j]
					break
				}
			}
		}
		if g := groups[devicesKey(p.Blocks[b].Devices)]; best < 0 && g != nil {
			// The latest forward of the group that runs before b and is
			// free: skip those after b (a search) and those paired both
			// ways (find).
			at, _ := slices.BinarySearchFunc(g.forwards, rank[b], func(f, r int) int { return r - rank[f] })
			for at = find(g, at); at < len(g.forwards); at = find(g, at+1) {
				if f := g.forwards[at]; a[fwd[f]/64]&(1<<(fwd[f]%64)) != 0 && free(f, k) {
					best = f
					break
				}
			}
		}
		if best >= 0 {
			pair[b] = best
			usedInput[best] = usedInput[best] || k.InputGradient
			usedWeight[best] = usedWeight[best] || k.WeightGradient
			if usedInput[best] && usedWeight[best] {
				groups[devicesKey(p.Blocks[best].Devices)].next[pos[best]] = pos[best] + 1
			}
		}
	}
	return pair
}

// kindInfo is the table's entry for k; a valid placement has only known
// kinds.
func kindInfo(k Kind) KindInfo {
	in, _ := k.Info()
	return in
}

// devicesKey is a map key of a device list.
func devicesKey(devs []int) string {
	b := make([]byte, 0, 4*len(devs))
	for _, d := range devs {
		b = append(b, byte(d), byte(d>>8), byte(d>>16), byte(d>>24))
	}
	return string(b)
}
