package report

import (
	"fmt"
	"strings"

	"github.com/tessel-pp/tessel/search"
)

// Provenance says in words what built the schedule and what it beat: the
// source, and the best other candidate with its makespan.
func Provenance(r *search.Result) string {
	text := r.Source.Unrefined().String()
	if r.Source.Kind == search.SourceRepetend {
		text = "the repetend with time-optimal warmup and cooldown"
	}
	if r.Source.Refined {
		text += ", its ends re-optimised by the solver"
	}
	if r.Source.Windows {
		text += ", windows of it re-optimised by the solver (large-neighbourhood search)"
	}
	if best, ok := r.RunnerUp(); ok {
		text += fmt.Sprintf("; best of %d constructions and baselines otherwise: %s (makespan %d)", len(r.Contenders), best.Source, best.Makespan)
	}
	return text
}

// ProofStatus says in words whether the schedule is proven optimal
// (Proven) and why, or why not: "yes: …" or "no (gap G): …".
func ProofStatus(r *search.Result) string {
	if r.Gap() <= 0 {
		return "yes: the makespan meets the lower bound"
	}
	if r.Proven() {
		if r.Fallback || r.Latency > 0 {
			return "yes: the time-optimal search of all micro-batches ran to its end"
		}
		return "yes: no repetend with these N_R has a shorter period, warmup and cooldown are time-optimal"
	}
	if r.Decisions {
		return fmt.Sprintf("no (gap %d): with offload or recompute a schedule is proven only where it meets the lower bound (the solver's repetends keep every activation)", r.Gap())
	}
	if r.Latency > 0 {
		return fmt.Sprintf("no (gap %d): under a latency budget a schedule is proven only at the lower bound or by the time-optimal search of all micro-batches under it (run where N·K ≤ %d, within its effort)", r.Gap(), search.MaxPhaseInstances)
	}
	var why []string
	if r.Repetend != nil && !r.PeriodProven() {
		why = append(why, "a shorter period was not ruled out (time limit, Ctrl-C, --effort or the solver's size limit)")
	}
	switch {
	case r.Source.Windows:
		why = append(why, "the solver re-optimised windows of the schedule within its effort, without a proof")
	case r.Source.Refined:
		why = append(why, "the solver re-optimised the schedule's ends within its effort, without a proof")
	case r.Source.Kind != search.SourceRepetend:
		why = append(why, "the schedule is a construction's, whose makespan is proven only at the lower bound")
	default:
		if !r.Fallback && !r.WarmupProven {
			why = append(why, "the warmup is not proven time-optimal")
		}
		if !r.Fallback && !r.CooldownProven {
			why = append(why, "the cooldown is not proven time-optimal")
		}
		if r.Fallback && (r.TO == nil || !r.TO.Proven) {
			why = append(why, "the time-optimal search stopped early")
		}
	}
	return fmt.Sprintf("no (gap %d): ", r.Gap()) + strings.Join(why, "; ")
}
