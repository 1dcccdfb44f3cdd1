package placement

import (
	"fmt"
	"strings"
)

// LinksText says how tensors cross devices on p, for a report's header:
// "" when every transfer is free, else the range of transfer times and,
// with channels, that each link carries one at a time.
func (p *Placement) LinksText() string {
	lo, hi := 0, 0
	for _, d := range p.Deps {
		if c := p.Transfer(d); c > 0 {
			if lo == 0 || c < lo {
				lo = c
			}
			hi = max(hi, c)
		}
	}
	if hi == 0 {
		return ""
	}
	x := func(v int) string { return fmt.Sprint(v) }
	if u := p.Units; u.HasTime() {
		x = func(v int) string { return u.Duration(float64(v)) }
	}
	t := fmt.Sprintf("every transfer between devices takes %s", x(lo))
	if lo != hi {
		t = fmt.Sprintf("transfers between devices take %s to %s", x(lo), x(hi))
	}
	if p.QueuedLinks {
		t += "; each link carries one at a time, the others queue"
	}
	return t
}

// BudgetText is the budget of p's devices under memory, for a report: one
// number where they share it ("unlimited" for none), else every device's,
// "[4 3 2]".
func (p *Placement) BudgetText(memory int) string {
	// In bytes where the placement says what a memory unit is.
	if u := p.Units; u.HasMemory() {
		one := func(b int) string {
			if b <= 0 {
				return "unlimited"
			}
			return u.Memory(float64(b))
		}
		if !p.Uniform(memory) {
			bs := p.Budgets(memory)
			parts := make([]string, len(bs))
			for d, b := range bs {
				parts[d] = one(b)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		return one(p.Budget(0, memory))
	}
	if !p.Uniform(memory) {
		return fmt.Sprint(p.Budgets(memory))
	}
	if b := p.Budget(0, memory); b > 0 {
		return fmt.Sprint(b)
	}
	return "unlimited"
}
