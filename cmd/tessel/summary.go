package main

import (

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
