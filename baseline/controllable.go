package baseline

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// V-Half and V-Min: Qi et al., "Pipeline Parallelism with Controllable
// Memory" (NeurIPS 2024), §4 and Fig. 5, as the authors build them
// (sail-sg/zero-bubble-pipeline-parallelism, scheduler zbv_greedy): on the
// V placement with a split backward, a repeating "building block" of the
// four passes of one micro-batch on every device — the forward of chunk 0
// (F), of chunk 1 (f), the input gradient of chunk 1 (B, the backward
// starts at the turn of the V) and of chunk 0 (b) — placed one micro-batch
// every 6 slots, with the weight gradients put into the empty slots after
// their input gradients; then two "squeeze" passes move every pass of the
// warmup and cooldown to the earliest free slot its dependencies allow
// without raising the peak memory of its device; the weight gradients are
// placed again into the empty slots, chunk 1's first. The order of the
// slots is each device's order; compaction times it with the placement's
// times. V-Half holds about half of 1F1B's activations, V-Min about a
// third.

// controllableBlock is the building block of one device at position i of
// L: the slot of F, f, B and b of micro-batch 0 (paper's Fig. 5).
type controllableBlock func(L, i int) [4]int

// vMinBlock is V-Min's building block: lifespan about a third of 1F1B's.
func vMinBlock(L, i int) [4]int {
	gap := 0
	if L%3 == 0 {
		gap = 2
	}
	return [4]int{i, 2*L - i - 1, 2*L + gap + i, 4*L + gap - i - 1}
}

// vHalfBlock is V-Half's building block: lifespan about half of 1F1B's.
func vHalfBlock(L, i int) [4]int {
	gap := 0
	if L%2 == 0 {
		gap = 3
	}
	return [4]int{2 * i, 3*L - i - 2, 3*L + gap + 2*i - 1, 6*L + gap - i - 2}
}

// VHalf is V-Half (Qi et al., "Pipeline Parallelism with Controllable
// Memory", §4.2): see the comment above.
func VHalf(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	return controllable("v-half", vHalfBlock, p, n, memory)
}

// VMin is V-Min (Qi et al., "Pipeline Parallelism with Controllable
// Memory", §4.2): see the comment above.
func VMin(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	return controllable("v-min", vMinBlock, p, n, memory)
}

// errSlots reports a building block that does not unroll for these
// micro-batches (a dependency after its slot): the construction does not
// apply.
var errSlots = errors.New("the building block does not unroll")

// slots are the slots of one device: slots[t][m] is the slot of pass t of
// micro-batch m; passes 0–3 are F, f, B, b and 4 (and 5) the weight
// gradients.
type slots [][]int

func (s slots) clone() slots {
	out := make(slots, len(s))
	for t := range s {
		out[t] = slices.Clone(s[t])
	}
	return out
}

func controllable(name string, block controllableBlock, p *placement.Placement, n, memory int) (*schedule.Schedule, error) {
	v, err := splitV(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	passes, err := controllablePasses(block, v.L, n)
	if err != nil {
		return nil, notApplicable(name, p, "%d micro-batches on %d devices: %v", n, v.L, err)
	}
	orders := make([][]schedule.Ref, p.Devices)
	for i, seq := range passes {
		c0, c1 := v.stage(v.chunk0(i)), v.stage(v.chunk1(i))
		blockOf := [6]int{c0.f, c1.f, c1.i, c0.i, c1.w, c0.w}
		d := v.dev[v.chunk0(i)]
		for _, pm := range seq {
			orders[d] = append(orders[d], schedule.Ref{Block: blockOf[pm.pass], Micro: pm.micro})
		}
	}
	return finish(name, p, n, memory, orders)
}

// passRef is pass t (0–3: F, f, B, b; 4, 5: the weight gradients of B
// and b) of one micro-batch.
type passRef struct{ pass, micro int }

// controllablePasses is the order of the passes on each of L devices for
// n micro-batches of the building block.
func controllablePasses(block controllableBlock, L, n int) ([][]passRef, error) {
	dev := make([]slots, L)
	for i := range L {
		b := block(L, i)
		dev[i] = make(slots, 4)
		for t := range 4 {
			for m := range n {
				dev[i][t] = append(dev[i][t], b[t]+6*m)
			}
		}
	}
	// Squeeze with the weight gradients in place, then without them.
	r1, err := squeeze(dev, true)
	if err != nil {
		return nil, err
	}
	for i := range r1 {
		r1[i] = r1[i][:4]
	}
	r2, err := squeeze(r1, false)
	if err != nil {
		return nil, err
	}
	out := make([][]passRef, L)
	for i := range L {
		s := putWeights(r2[i][:4], true)
		type item struct{ slot, pass, micro int }
		var items []item
		for t, ms := range s {
			for m, at := range ms {
				items = append(items, item{at, t, m})
			}
		}
		slices.SortFunc(items, func(a, b item) int {
			return cmp.Or(cmp.Compare(a.slot, b.slot), cmp.Compare(a.pass, b.pass), cmp.Compare(a.micro, b.micro))
		})
		for _, it := range items {
			out[i] = append(out[i], passRef{it.pass, it.micro})
		}
	}
	return out, nil
}

// nextPass returns the pass whose next slot is the least (ties: the lower
// pass) among the first passes of s, with ptr[t] the next micro-batch of
// pass t; ok is false when every pass is done.
func nextPass(s slots, passes int, ptr []int) (slot, pass int, ok bool) {
	pass = -1
	for t := range passes {
		if ptr[t] < len(s[t]) && (pass < 0 || s[t][ptr[t]] < slot) {
			slot, pass = s[t][ptr[t]], t
		}
	}
	return slot, pass, pass >= 0
}

// lastSlot is the greatest slot of s.
func lastSlot(s slots) int {
	out := 0
	for _, ms := range s {
		for _, at := range ms {
			out = max(out, at)
		}
	}
	return out
}

// putWeights adds the weight gradients to the slots of one device: walking
// the slots, every input gradient (B or b) makes a weight gradient wait,
// and every empty slot takes one waiting weight gradient (chunk 1's first
// when split gives each chunk its own pass 4 and 5, else all in pass 4);
// those still waiting go after the last slot.
func putWeights(s slots, split bool) slots {
	out := s.clone()
	bound := lastSlot(out)
	wpass := 1
	if split {
		wpass = 2
	}
	for range wpass {
		out = append(out, nil)
	}
	var waiting [2]int
	ptr := make([]int, 4)
	i := 0
	for ; i <= bound; i++ {
		at, t, ok := nextPass(out, 4, ptr)
		if ok && at == i {
			ptr[t]++
			if t >= 2 {
				w := 0
				if split {
					w = t - 2
				}
				waiting[w]++
			}
			continue
		}
		for w := range 2 {
			if waiting[w] > 0 {
				out[4+w] = append(out[4+w], i)
				waiting[w]--
				break
			}
		}
	}
	i--
	for w := range 2 {
		for ; waiting[w] > 0; waiting[w]-- {
			i++
			out[4+w] = append(out[4+w], i)
		}
	}
	return out
}

// slotPeak is the peak activation memory of one device's slots in units of one
// forward: F and f add one, a weight gradient frees one; without weight
// passes, every empty slot after an input gradient frees one.
func slotPeak(s slots) int {
	mem := [5]int{1, 1, 0, 0, -1}
	hasW := len(s) > 4
	bound := lastSlot(s)
	ptr := make([]int, len(s))
	cur, out, waiting := 0, 0, 0
	for i := 0; i <= bound; i++ {
		at, t, ok := nextPass(s, len(s), ptr)
		switch {
		case ok && at == i:
			ptr[t]++
			cur += mem[t]
			if t == 2 || t == 3 {
				waiting++
			}
		case !hasW && waiting > 0:
			cur += mem[4]
			waiting--
		}
		out = max(out, cur)
	}
	return out
}

// squeeze is one squeezing pass over the slots of every device. Passes
// are taken in the order of their slots (ties: device, pass, micro-batch).
// The first micro-batch's passes, up to the end of its backward on device
// 0, stay where they are when weights (the weight gradients are in
// place) is false; from there to the last micro-batch's first forward
// everything stays (the steady state). Any other pass moves to the
// earliest free slot after its dependencies whose move keeps its device's
// peak memory, or stays. The result is the slots re-timed with every pass
// taking one slot.
func squeeze(in []slots, weights bool) ([]slots, error) {
	L := len(in)
	res := make([]slots, L)
	passes := 4
	for i := range in {
		res[i] = in[i].clone()
		if weights {
			res[i] = putWeights(res[i], false)
			passes = 5
		}
	}
	limit := 0
	for _, s := range res {
		limit = max(limit, slotPeak(s))
	}
	occupied := make([][]bool, L)
	for i := range res {
		occupied[i] = make([]bool, lastSlot(res[i])+1)
	}
	ptr := make([][]int, L)
	for i := range ptr {
		ptr[i] = make([]int, passes)
	}
	total := 0
	for i := range res {
		for t := range passes {
			total += len(res[i][t])
		}
	}
	nmb := len(res[0][0])
	phase := 0
	for range total {
		at, dev, t, m := -1, -1, -1, -1
		for i := range L {
			if a, tt, ok := nextPass(res[i], passes, ptr[i]); ok && (dev < 0 || a < at) {
				at, dev, t = a, i, tt
			}
		}
		m = ptr[dev][t]
		ptr[dev][t]++
		if t == 3 && dev == 0 && phase == 0 {
			phase = 1
		}
		if phase == 1 || (phase == 0 && !weights) {
			if phase == 1 && t == 0 && m == nmb-1 {
				phase = 2
			}
			occupied[dev][at] = true
			continue
		}
		dep := -1
		switch {
		case (t == 0 || t == 2) && dev > 0:
			dep = max(dep, res[dev-1][t][m])
		case (t == 1 || t == 3) && dev+1 < L:
			dep = max(dep, res[dev+1][t][m])
		}
		if t > 0 && t < 4 {
			dep = max(dep, res[dev][t-1][m])
		}
		if t == 4 {
			b := slices.Concat(res[dev][2], res[dev][3])
			slices.Sort(b)
			dep = max(dep, b[m])
		}
		if m > 0 {
			dep = max(dep, res[dev][t][m-1])
		}
		dep++
		if dep > at {
			return nil, errSlots
		}
		moved := false
		for slot := dep; slot < at; slot++ {
			if occupied[dev][slot] {
				continue
			}
			res[dev][t][m] = slot
			if slotPeak(res[dev]) <= limit {
				moved = true
				break
			}
		}
		if !moved {
			res[dev][t][m] = at
		}
		occupied[dev][res[dev][t][m]] = true
	}
	if !weights {
		for i := range res {
			res[i] = putWeights(res[i], false)
		}
	}
	return retime(res)
}

// retime gives every pass of every device, taken in the order of their
// slots, the earliest slot after its dependencies and after the previous
// pass of its device, each pass taking one slot (the authors' "eager
// execution" with unit times and no transfer).
func retime(in []slots) ([]slots, error) {
	L := len(in)
	passes := len(in[0])
	end := make([]slots, L)
	out := make([]slots, L)
	for i := range in {
		end[i] = in[i].clone()
		out[i] = in[i].clone()
	}
	ptr := make([][]int, L)
	free := make([]int, L)
	total := 0
	for i := range in {
		ptr[i] = make([]int, passes)
		for t := range passes {
			total += len(in[i][t])
		}
	}
	for range total {
		at, dev, t := -1, -1, -1
		for i := range L {
			if a, tt, ok := nextPass(in[i], passes, ptr[i]); ok && (dev < 0 || a < at) {
				at, dev, t = a, i, tt
			}
		}
		m := ptr[dev][t]
		ptr[dev][t]++
		ready := free[dev]
		switch {
		case (t == 0 || t == 2) && dev > 0:
			ready = max(ready, end[dev-1][t][m])
		case (t == 1 || t == 3) && dev+1 < L:
			ready = max(ready, end[dev+1][t][m])
		}
		if t > 0 && t < 4 {
			ready = max(ready, end[dev][t-1][m])
		}
		if m > 0 {
			ready = max(ready, end[dev][t][m-1])
		}
		out[dev][t][m] = ready
		end[dev][t][m] = ready + 1
		free[dev] = ready + 1
	}
	for i := range out {
		for t := range out[i] {
			for m := 1; m < len(out[i][t]); m++ {
				if out[i][t][m] <= out[i][t][m-1] {
					return nil, fmt.Errorf("%w: pass %d out of order", errSlots, t)
				}
			}
		}
	}
	return out, nil
}
