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
		fmt.Fprintf(w, "repetend     %sN_R %d, period %d (lower bound %d), repetend bubble rate %s\n", used, rep.NR, rep.Period, r.Bounds.Period, textfmt.Pct(*sum.RepetendBubbleRate))
		fmt.Fprintf(w, "offsets      %s\n", rep.OffsetsText(p))
		for d, line := range rep.DeviceRows(p) {
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
	if s.Repetend != nil {
		units = min(units, s.Repetend.Start+2*s.Repetend.Period+1)
	}
	if err := render.TextUpTo(s, w, units); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nschedule     %d micro-batches: makespan %d (lower bound %d, gap %d), bubble rate %s\n", s.MicroBatches, sum.Makespan, sum.LowerBound.Makespan, r.Gap(), textfmt.Pct(sum.BubbleRate))
	if sum.LowerBound.By != "" {
		fmt.Fprintf(w, "lower bound  %d, by %s\n", sum.LowerBound.Makespan, sum.LowerBound.By)
	}
	fmt.Fprintf(w, "steady state %s\n", sum.steady.text(s))
	fmt.Fprintf(w, "built by     %s\n", Provenance(r))
	fmt.Fprintf(w, "peak memory  %s (budget %s)\n", textfmt.Ints(sum.PeakMemory), p.BudgetText(o.Memory))
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
	fmt.Fprintf(w, "proven       %s\n", ProofStatus(r))
	fmt.Fprintf(w, "verified     %s\n", textfmt.YesNo(sum.Valid))
	return nil
}
