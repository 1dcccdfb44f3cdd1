package main

import (
	"fmt"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
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

// steadyText says what s does once it repeats, in one line: its period
// (per so many micro-batches), N_R and bubble rate, and where the
// periodic stretches lie.
func steadyText(s *schedule.Schedule) string {
	st := schedule.SteadyOf(s)
	if st == nil {
		return "none found: no stretches of the schedule repeat exactly with every block in one"
	}
	period := fmt.Sprint(st.Period)
	if st.PerPeriod > 1 {
		period = fmt.Sprintf("%d for %d micro-batches", st.Period, st.PerPeriod)
	}
	where := func(x schedule.Stretch) string {
		return fmt.Sprintf("%d %s from time %d", x.Iterations, plural(x.Iterations, "iteration"), x.Start)
	}
	text := fmt.Sprintf("period %s, N_R %d, bubble rate %s", period, st.NR, pct(st.BubbleRate))
	switch {
	case len(st.Stretches) == 1:
		text += " (" + where(st.Main) + ")"
	default:
		parts := make([]string, len(st.Stretches))
		for k, x := range st.Stretches {
			ids := make([]string, len(x.Blocks))
			for j, i := range x.Blocks {
				ids[j] = s.Placement.Blocks[i].ID
			}
			block := strings.Join(ids, " ")
			if len(ids) > 3 {
				block = fmt.Sprintf("%d blocks", len(ids))
			}
			parts[k] = fmt.Sprintf("%s every %d, %s", block, x.Period, where(x))
		}
		text += fmt.Sprintf(" over %d periodic stretches one after another: %s", len(st.Stretches), strings.Join(parts, "; "))
	}
	return text
}
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
