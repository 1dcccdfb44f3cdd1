package report

import (
	"fmt"
	"io"
	"time"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/z3"
)

// OptimalSummary is the summary tessel optimal --json prints of res, the
// search having taken elapsed: the schedule's figures, the stronger of
// the rules' bounds and the solver's and what proves it
// (search.OptimalBound), the decisions counted where they were allowed.
func OptimalSummary(res *search.OptimalResult, elapsed time.Duration, decisions bool) Summary {
	s := res.Schedule
	sum := NewSummary(s, "time-optimal", res.Solution.Proven)
	if decisions {
		sum.WithDecisions(s)
	}
	sum.Seconds = SummarySeconds{Total: textfmt.Secs(elapsed)}
	sum.LowerBound.Makespan, sum.LowerBound.By = res.Bound.Makespan, res.Bound.By
	return sum
}

// OptimalText writes the time-optimal search's report as tessel optimal
// prints it: the question, the schedule's picture (at most o.Units time
// units), the makespan and whether it is proven, its lower bound and what
// proves it, and the search's time (elapsed). sum is OptimalSummary;
// o.NR and o.Strategy are not used.
func OptimalText(w io.Writer, r *search.OptimalResult, sum Summary, o TextOptions, elapsed time.Duration) error {
	p, s, sol := o.Placement, r.Schedule, r.Solution
	if p == nil || p.HasCandidates() {
		p = s.Placement // the devices chosen
	}
	fmt.Fprintf(w, "time-optimal schedule: %s, %d devices, %d micro-batches, memory %s\n",
		p.Name, p.Devices, o.MicroBatches, p.BudgetText(o.Memory))
	if t := s.Placement.ChoiceString(); t != "" {
		fmt.Fprintf(w, "devices chosen: %s\n", t)
	}
	fmt.Fprintln(w)
	if err := render.TextUpTo(s, w, o.Units); err != nil {
		return err
	}
	status := "proven optimal"
	if !sol.Proven {
		status = fmt.Sprintf("not proven: the optimum is between %d and %d (stopped by the time limit)", sol.LowerBound, sol.Makespan)
	}
	fmt.Fprintf(w, "\nmakespan     %d (%s)\n", sum.Makespan, status)
	bound := "proven by " + r.Bound.By
	if r.Bound.Solver {
		bound += fmt.Sprintf("; the relaxations and the memory budget give %d", r.Bound.Relaxed)
	}
	fmt.Fprintf(w, "lower bound  %d (%s)\n", sum.LowerBound.Makespan, bound)
	fmt.Fprintf(w, "bubble rate  %s\n", textfmt.Pct(sum.BubbleRate))
	fmt.Fprintf(w, "peak memory  %s (budget %s)\n", textfmt.Ints(sum.PeakMemory), p.BudgetText(o.Memory))
	if schedule.ShowsLatency(s) {
		fmt.Fprintf(w, "latency      %s\n", schedule.LatencyText(s))
	}
	if o.Decisions {
		fmt.Fprintf(w, "decisions    %s\n", s.DecisionsText())
	}
	fmt.Fprintf(w, "verified     %s\n", textfmt.YesNo(sum.Valid))
	if r.Source.Kind != search.SourceSolver {
		fmt.Fprintf(w, "built by     %s (the solver found nothing shorter)\n", r.Source)
	}
	fmt.Fprintf(w, "search time  %v (%d solver calls, Z3 %s)\n", elapsed.Round(time.Microsecond), sol.Checks, z3.Version())
	return nil
}
