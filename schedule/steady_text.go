package schedule

import (
	"fmt"
	"strings"
)

// SteadyText says what s does once it repeats, in one line: its period
// (per so many micro-batches), N_R and bubble rate, and where the
// periodic stretches lie. It is the "steady state" line of tessel search
// and tessel plan.
func SteadyText(s *Schedule) string {
	return SteadyTextOf(s, SteadyOf(s))
}

// SteadyNotSought is the steady state's text where it was not looked
// for (SteadyWithin). A constant, so no caller can change it; its number
// is SteadyLimit's (TestSteadyNotSoughtNamesTheLimit).
const SteadyNotSought = "not looked for: more than 65536 instances and no repetend recorded"

// SteadyTextOf is SteadyText with s's steady state st (SteadyOf(s))
// already known.
func SteadyTextOf(s *Schedule, st *SteadyState) string {
	if st == nil {
		return "none found: no stretches of the schedule repeat exactly with every block in one"
	}
	// In a person's units where the placement states them.
	t := func(x int) string { return fmt.Sprint(x) }
	from := "from time"
	if u := s.Placement.Units; u.HasTime() {
		t, from = func(x int) string { return u.Duration(float64(x)) }, "from"
	}
	period := t(st.Period)
	if st.PerPeriod > 1 {
		period = fmt.Sprintf("%s for %d micro-batches", t(st.Period), st.PerPeriod)
	}
	where := func(x Stretch) string {
		return fmt.Sprintf("%d %s %s %s", x.Iterations, plural(x.Iterations, "iteration"), from, t(x.Start))
	}
	text := fmt.Sprintf("period %s, N_R %d, bubble rate %.2f%%", period, st.NR, 100*st.BubbleRate)
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
			parts[k] = fmt.Sprintf("%s every %s, %s", block, t(x.Period), where(x))
		}
		text += fmt.Sprintf(" over %d periodic stretches one after another: %s", len(st.Stretches), strings.Join(parts, "; "))
	}
	return text
}
