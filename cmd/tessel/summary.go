package main

import (
	"fmt"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
)

// The report helpers every command shares (package textfmt).
var (
	round6    = textfmt.Round6
	secs      = textfmt.Secs
	printJSON = textfmt.JSON
	pct       = textfmt.Pct
	budget    = textfmt.Budget
	ints      = textfmt.Ints
	yesNo     = textfmt.YesNo
)

func ptr[T any](v T) *T { return &v }

// budgetOf is the budget of p's devices under memory: one number where
// they share it (budget), else every device's.
func budgetOf(p *placement.Placement, memory int) string {
	if p.Uniform(memory) {
		return budget(p.Budget(0, memory))
	}
	return ints(p.Budgets(memory))
}

// linksText says how tensors cross devices on p, for a report's header:
// "" when every transfer is free, else the range of transfer times and,
// with channels, that each link carries one at a time.
func linksText(p *placement.Placement) string {
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
	t := fmt.Sprintf("every transfer between devices takes %d", lo)
	if lo != hi {
		t = fmt.Sprintf("transfers between devices take %d to %d", lo, hi)
	}
	if p.Channels {
		t += "; each link carries one at a time, the others queue"
	}
	return t
}
