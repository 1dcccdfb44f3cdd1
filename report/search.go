package report

import (
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
)

// TextOptions are what SearchText and OptimalText say beside the result:
// what the search was asked.
type TextOptions struct {
	Placement    *placement.Placement // the placement searched (on its cluster)
	Memory       int                  // the budget asked, 0 for none
	NR           int                  // the largest N_R asked, 0 for the budget's
	MicroBatches int
	Strategy     repetend.Strategy
	Decisions    bool // offload or recompute was allowed: a line counts them
	Units        int  // the most time units the picture draws
	// Answer, when set, is the schedule to report instead of the
	// result's: the result's timed at a placement's own steps (package
	// exact), Step of them a step of the result's. The repetend and the
	// proofs stay the result's, written in time.
	Answer *schedule.Schedule
	Step   int
	Listed bool // Answer is a list schedule in the result's order (package exact)
}

// SearchText writes the search's report as tessel search prints it: the
// question, the repetend, the schedule's picture (its warmup and two
// iterations of the repetend, at most o.Units) and its figures; sum is
// SearchSummary(r, …) (with WithDecisions where decisions were allowed).
func SearchText(w io.Writer, r *search.Result, sum Summary, o TextOptions) error {
	p, s, rep := o.Placement, r.Schedule, r.Repetend
	if p == nil || p.HasCandidates() {
		p = s.Placement // the devices chosen
	}
	// The search's placement (a coarse copy's, Step steps a step) and
	// the schedule reported, which states its units where it has them.
	sp, k := s.Placement, max(o.Step, 1)
	if o.Answer != nil {
		s = o.Answer
	}
	u := s.Placement.Units
	searchTime := func(x int) string { return fmt.Sprint(x) }
	if u.HasTime() {
		searchTime = func(x int) string { return u.Duration(float64(x * k)) }
	}
	nrText := "N_R from the budget"
	if o.NR > 0 {
		nrText = fmt.Sprintf("N_R ≤ %d", o.NR)
	} else if r.Search != nil {
		nrText = fmt.Sprintf("N_R ≤ %d", r.Search.MaxNR)
	}
	fmt.Fprintf(w, "tessel search: %s, %d devices, memory %s, %s, %d micro-batches, method %s\n",
		p.Name, p.Devices, p.BudgetText(o.Memory), nrText, o.MicroBatches, o.Strategy)
	if t := p.LinksText(); t != "" {
		fmt.Fprintf(w, "links: %s\n", t)
	}
	if t := s.Placement.ChoiceString(); t != "" {
		fmt.Fprintf(w, "devices chosen: %s\n", t)
	}
	fmt.Fprintln(w)
	if rep != nil {
		used := ""
		if !r.RepetendUsed() {
			used = "found, not used: "
		}
		at := ""
		if k > 1 {
			at = fmt.Sprintf(" at the search's steps of %s", u.StepText(float64(k)))
		}
		fmt.Fprintf(w, "repetend     %sN_R %d, period %s (lower bound %s)%s, repetend bubble rate %s\n", used, rep.NR, searchTime(rep.Period), searchTime(r.Bounds.Period), at, textfmt.Pct(*sum.RepetendBubbleRate))
		fmt.Fprintf(w, "offsets      %s\n", rep.OffsetsText(p))
		for d, line := range rep.DeviceRows(sp) {
			fmt.Fprintf(w, "  device %-3d %s\n", d, line)
		}
	} else {
		fmt.Fprintf(w, "repetend     none with N_R ≤ %d fits the budget\n", o.NR)
	}
	fmt.Fprintln(w)
	if r.Fallback && r.Source.Kind == search.SourceRepetend {
		fmt.Fprintf(w, "%d micro-batches is fewer than N_R %d: the schedule below is the time-optimal search of all of them.\n\n", o.MicroBatches, rep.NR)
	}
	units := o.Units
	if rs := r.Schedule.Repetend; rs != nil {
		units = min(units, rs.Start+2*rs.Period+1)
	}
	if err := render.TextUpTo(s, w, units); err != nil {
		return err
	}
	gap := r.Gap()
	if sum.Gap != nil {
		gap = *sum.Gap
	}
	if u.HasTime() {
		fmt.Fprintf(w, "\nschedule     %d micro-batches: makespan %s (lower bound %s, gap %s), bubble rate %s\n", s.MicroBatches, u.Duration(float64(sum.Makespan)),
			u.Duration(float64(sum.LowerBound.Makespan)), u.Duration(float64(gap)), textfmt.Pct(sum.BubbleRate))
		how := "every block and transfer at its own time"
		if o.Listed {
			how = "a list schedule in the order of the search's starts (its orders and decisions did not fit the exact times)"
		}
		fmt.Fprintf(w, "timed        %s, in steps of %s (makespan %d steps)\n", how, u.StepText(1), sum.Makespan)
	} else {
		fmt.Fprintf(w, "\nschedule     %d micro-batches: makespan %d (lower bound %d, gap %d), bubble rate %s\n", s.MicroBatches, sum.Makespan, sum.LowerBound.Makespan, gap, textfmt.Pct(sum.BubbleRate))
	}
	if sum.LowerBound.By != "" {
		lb := fmt.Sprint(sum.LowerBound.Makespan)
		if u.HasTime() {
			lb = u.Duration(float64(sum.LowerBound.Makespan))
		}
		fmt.Fprintf(w, "lower bound  %s, by %s\n", lb, sum.LowerBound.By)
	}
	fmt.Fprintf(w, "steady state %s\n", sum.steady.text(s))
	fmt.Fprintf(w, "built by     %s\n", ProvenanceIn(r, searchTime))
	fmt.Fprintf(w, "peak memory  %s (budget %s)\n", u.Memories(sum.PeakMemory), s.Placement.BudgetText(o.Memory))
	if schedule.ShowsLatency(s) {
		fmt.Fprintf(w, "latency      %s\n", schedule.LatencyText(s))
	}
	if o.Decisions {
		fmt.Fprintf(w, "decisions    %s\n", s.DecisionsText())
	}
	if r.Search != nil {
		st := r.Search.Stats
		fmt.Fprintf(w, "solver       %d candidates seen, %d pruned, %d solved, %d rejected by warmup/cooldown (%d solver calls)\n", st.Seen, st.Pruned, st.Solved, st.Rejected, st.Checks)
	} else if r.Skipped != "" {
		fmt.Fprintf(w, "solver       not needed for the repetend: %s\n", r.Skipped)
	}
	t := r.Times
	fmt.Fprintf(w, "search time  %.3fs (constructions %.3fs, repetend %.3fs, warmup %.3fs, cooldown %.3fs, refining %.3fs)\n", t.Total.Seconds(), t.Constructions.Seconds(), t.Repetend.Seconds(), t.Warmup.Seconds(), t.Cooldown.Seconds(), t.Refine.Seconds())
	if r.Stopped != "" {
		fmt.Fprintf(w, "stopped      %s\n", r.Stopped)
	}
	if k > 1 {
		fmt.Fprintf(w, "proven       at the search's steps of %s: %s\n", u.StepText(float64(k)), ProofStatusIn(r, searchTime))
	} else {
		fmt.Fprintf(w, "proven       %s\n", ProofStatus(r))
	}
	if sum.FromPeriod {
		fmt.Fprintf(w, "verified     %s, from its period (%d instances, never all built for the check)\n", textfmt.YesNo(sum.Valid), s.MicroBatches*len(s.Placement.Blocks))
	} else {
		fmt.Fprintf(w, "verified     %s\n", textfmt.YesNo(sum.Valid))
	}
	return nil
}
