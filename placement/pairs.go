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
	anc := make([][]bool, len(p.Blocks)) // anc[i][j]: j runs before i
	for _, i := range order {
		anc[i] = make([]bool, len(p.Blocks))
		for _, j := range preds[i] {
			anc[i][j] = true
			for k, a := range anc[j] {
				anc[i][k] = anc[i][k] || a
			}
		}
	}
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
		if best < 0 {
			for f, fb := range p.Blocks {
				if !kindInfo(fb.Kind).Gradient && free(f, k) && anc[b][f] && slices.Equal(fb.Devices, p.Blocks[b].Devices) &&
					(best < 0 || rank[f] > rank[best]) {
					best = f
				}
			}
		}
		if best >= 0 {
			pair[b] = best
			usedInput[best] = usedInput[best] || k.InputGradient
			usedWeight[best] = usedWeight[best] || k.WeightGradient
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
