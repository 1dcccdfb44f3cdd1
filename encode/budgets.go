package encode

import "github.com/tessel-pp/tessel/spec"

// unbounded is the entry shift of a device without a budget: beyond any
// running sum of a problem tessel builds (|memory| ≤ 10⁹ per block, at
// most 2²⁰ micro-batches of at most a few thousand blocks).
const unbounded = 1 << 52

// BudgetShift returns the one budget and the per-device entry shift that
// express the budgets of sp's devices (Spec.Budget: sp's Memory and the
// devices' capacities):
// budget is the largest budget, shift[d] = budget − M_d (unbounded for a
// device without one). Where every device has the same budget, shift is
// nil and budget is that budget (0: unlimited): the problem is then
// exactly what it was before per-device budgets existed.
func BudgetShift(sp spec.Spec) (budget int, shift []int) {
	p, memory := sp.Placement, sp.Memory
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
