package smt

import "github.com/tessel-pp/tessel/placement"

// A Problem has one memory budget, Memory, and an entry memory per device.
// Per-device budgets (placement's Budget: a search's budget and each
// device's capacity from a cluster) reduce to that form exactly, without
// touching the encoder: every memory constraint the encoder and the list
// schedules write is entry_d + (running sum on d) ≤ Memory, so a device of
// budget M_d < M behaves as one of budget M that starts with M − M_d more
// memory. A device without a budget among limited ones starts far below
// zero (unbounded), so that no sum of its tasks' memory reaches M.

// unbounded is the entry shift of a device without a budget: beyond any
// running sum of a problem tessel builds (|memory| ≤ 10⁹ per block, at
// most 2²⁰ micro-batches of at most a few thousand blocks).
const unbounded = 1 << 52

// BudgetShift returns the one budget and the per-device entry shift that
// express the budgets of p's devices under memory (placement's Budget):
// budget is the largest budget, shift[d] = budget − M_d (unbounded for a
// device without one). Where every device has the same budget, shift is
// nil and budget is that budget (0: unlimited): the problem is then
// exactly what it was before per-device budgets existed.
func BudgetShift(p *placement.Placement, memory int) (budget int, shift []int) {
	if p.Uniform(memory) {
		return p.Budget(0, memory), nil
	}
	budgets := p.Budgets(memory)
	for _, b := range budgets {
		budget = max(budget, b)
	}
	shift = make([]int, p.Devices)
	for d, b := range budgets {
		if b <= 0 {
			shift[d] = -unbounded
		} else {
			shift[d] = budget - b
		}
	}
	return budget, shift
}

// ShiftEntry adds shift (nil: none) to entry (nil: zero) per device.
func ShiftEntry(entry, shift []int) []int {
	if shift == nil {
		return entry
	}
	out := make([]int, len(shift))
	for d := range out {
		out[d] = shift[d]
		if entry != nil {
			out[d] += entry[d]
		}
	}
	return out
}
