package repetend

import (
	"context"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// MaxNR is the largest number of micro-batches a repetend of sp's
// placement may span under sp's memory budget (the paper's
// CalMaxInflight): past it, every candidate's entry memory exceeds the
// budget on some device. With no budget it is limit.
func MaxNR(ctx context.Context, sp spec.Spec, limit int) int {
	p, memory := sp.Placement, sp.Memory
	if !p.Limited(memory) {
		return limit
	}
	best := 1
	for nr := 1; nr <= limit; nr++ {
		if !fitsSome(ctx, p, nr, memory) {
			break
		}
		best = nr
	}
	return best
}

// fitsSome reports whether some candidate Enumerate yields for nr has an
// entry memory within every device's budget. It walks Enumerate's tree
// but cuts a branch as soon as no completion of it can fit, so that
// proving that nothing fits does not cost every candidate (on a chunked,
// split-backward x-shape that was minutes). A completion's entry memory
// is at least the assigned blocks' part plus, for each unassigned block
// that frees memory, its memory at the highest offset it may still take
// (an offset never exceeds a predecessor's); and the largest offset,
// nr−1, must still be reachable: when no assigned block has it, some
// unassigned block must be free to take it. It returns false when ctx
// ends first.
func fitsSome(ctx context.Context, p *placement.Placement, nr int, memory int) bool {
	order, ok := p.Topo()
	if !ok || nr < 1 {
		return false
	}
	w := fitWalk{
		ctx: ctx, p: p, nr: nr, order: order, preds: p.Preds(),
		memory: memory,
		offs:   make([]int, len(p.Blocks)),
		entry:  make([]int, p.Devices),
		least:  make([]int, p.Devices),
	}
	return w.walk(0, false, false)
}

type fitWalk struct {
	ctx    context.Context
	p      *placement.Placement
	nr     int
	order  []int
	preds  [][]int
	memory int
	offs   []int // offsets of the assigned blocks (order[:k])
	entry  []int // the assigned blocks' entry memory, by device
	least  []int // scratch: the least entry memory of a completion
	nodes  int
	done   bool // ctx ended
}

func (w *fitWalk) walk(k int, usedLo, usedHi bool) bool {
	if w.done {
		return false
	}
	if w.nodes++; w.nodes%4096 == 0 && w.ctx.Err() != nil {
		w.done = true
		return false
	}
	if k == len(w.order) {
		return usedLo && usedHi && withinBudget(w.p, w.entry, w.memory)
	}
	if !w.mayFit(k, usedHi) {
		return false
	}
	i := w.order[k]
	b := w.p.Blocks[i]
	hi := w.nr - 1
	for _, j := range w.preds[i] {
		hi = min(hi, w.offs[j])
	}
	for v := hi; v >= 0; v-- {
		w.offs[i] = v
		for _, d := range b.Devices {
			w.entry[d] += v * b.Memory
		}
		found := w.walk(k+1, usedLo || v == 0, usedHi || v == w.nr-1)
		for _, d := range b.Devices {
			w.entry[d] -= v * b.Memory
		}
		if found || w.done {
			return found
		}
	}
	return false
}

// mayFit is the cut: whether some completion of the blocks order[:k]
// could still be yielded and fit.
func (w *fitWalk) mayFit(k int, usedHi bool) bool {
	copy(w.least, w.entry)
	reachHi := usedHi
	for _, i := range w.order[k:] {
		t := w.nr - 1
		for _, j := range w.preds[i] {
			t = min(t, w.offs[j]) // assigned: its offset; not: its top, set above (topological order)
		}
		w.offs[i] = t // read by the block's successors in this pass
		reachHi = reachHi || t == w.nr-1
		if m := w.p.Blocks[i].Memory; m < 0 {
			for _, d := range w.p.Blocks[i].Devices {
				w.least[d] += t * m
			}
		}
	}
	return reachHi && withinBudget(w.p, w.least, w.memory)
}
