package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/recompute"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/torchcsv"
)

// Plan is tessel plan's report: a model cut into stages (package
// partition) and the schedule of its placement (package search), in
// placement steps and in the model's time. Its JSON is tessel plan --json.
type Plan struct {
	Partition *partition.Report `json:"partition"`
	Schedule  Summary           `json:"schedule"`
	// Model-time figures of the schedule returned: its makespan and its
	// time per micro-batch in the steady state (omitted where the
	// schedule has none), beside the split's max load; in the model's
	// time unit, TimeUnit ("" where the model names none).
	TimeUnit       string   `json:"time_unit,omitempty"`
	MakespanTime   float64  `json:"makespan_time"`
	PeriodTime     *float64 `json:"period_time,omitempty"`
	TimePerSample  float64  `json:"time_per_sample"`
	EvenPerSample  float64  `json:"even_time_per_sample,omitempty"`
	SearchSeconds  float64  `json:"search_seconds"`
	TotalSeconds   float64  `json:"seconds"`
	ScheduleFile   string   `json:"schedule_file,omitempty"`
	PlacementFile  string   `json:"placement_file,omitempty"`
	ScheduleProven bool     `json:"schedule_proven"`
	// Memory is each device's memory under the model (a profile with a
	// capacity): what its stages hold for good and the budget left for
	// the schedule.
	Memory *partition.MemoryReport `json:"memory,omitempty"`
	// MergedBackward is what running every input gradient and its weight
	// gradient as one full backward costs (a runtime that cannot split
	// the backward: torchtitan under FlexAttention; tessel export
	// --merge-bw); nil where the schedule splits none, or offloads or
	// recomputes.
	MergedBackward *MergedCost `json:"merged_backward,omitempty"`
	// Versus is the plan against the baselines and its levers (SetVersus);
	// nil where not asked.
	Versus *Versus `json:"versus,omitempty"`
	// Recompute is, with --recompute, the per-instance decisions beside
	// the per-stage policy (package recompute), set by the caller.
	Recompute *recompute.Summary `json:"recompute,omitempty"`

	plan *plan.Result
}

// MergedCost is the schedule with its backwards merged
// (torchcsv.MergeBackward): its makespan, in steps and in model time.
type MergedCost struct {
	Makespan     int     `json:"makespan"`
	MakespanTime float64 `json:"makespan_time"`
}

// NewPlan is the report of a plan. The caller sets the files and the
// total time.
func NewPlan(in *plan.Result) *Plan {
	pr := in.Partition
	s := in.Search.Schedule
	sum := ExactSummary(in.Search, in.Strategy)
	if in.Decisions {
		sum.WithDecisions(s)
	}
	// The time per micro-batch of the schedule's own steady state.
	unit := pr.Converted.TimeUnit
	var periodTime *float64 // none without a steady state
	if st := sum.steady.of(s); st != nil {
		t := textfmt.Round6(st.TimePerMicroBatch() * unit)
		periodTime = &t
	}
	r := &Plan{
		Partition: pr, Schedule: sum, TimeUnit: pr.Graph.TimeUnit,
		MakespanTime: textfmt.Round6(float64(sum.Makespan) * unit), PeriodTime: periodTime,
		TimePerSample: pr.MaxLoad, ScheduleProven: in.Search.Search.Proven(), SearchSeconds: textfmt.Secs(in.SearchTime),
		Memory: partition.NewMemoryReport(in.Memory, pr.Graph.Bytes, pr.Converted.MemoryUnit),
		plan:   in,
	}
	for _, b := range pr.Baselines {
		if b.Method == "even" {
			r.EvenPerSample = b.MaxLoad
		}
	}
	if m, err := torchcsv.MergeBackward(s); err == nil && m != s {
		span := schedule.Makespan(m)
		r.MergedBackward = &MergedCost{Makespan: span, MakespanTime: textfmt.Round6(float64(span) * unit)}
	}
	return r
}

// WriteText writes the report as tessel plan prints it: the partition,
// the time per sample beside the even split's, each device's memory, the
// schedule's picture (its warmup and two iterations of the repetend, at
// most units cells) and its figures, in the model's time and memory.
func (r *Plan) WriteText(w io.Writer, units int) error {
	in := r.plan
	pr, res, sum := r.Partition, in.Search.Search, r.Schedule
	s, rep := in.Search.Schedule, res.Repetend
	u := s.Placement.Units
	mt := func(x float64) string { return pr.Graph.FormatTime(x) } // the model's time
	Partition(w, pr)
	fmt.Fprintln(w)
	if r.EvenPerSample > 0 {
		fmt.Fprintf(w, "time per sample  %s (the even split by layer count: %s, %.2f× slower)\n", mt(r.TimePerSample), mt(r.EvenPerSample), r.EvenPerSample/r.TimePerSample)
	}
	if in.Memory != nil {
		memoryTable(w, in.Memory, pr.Graph.Bytes)
	}
	if rs := res.Schedule.Repetend; rs != nil {
		units = min(units, rs.Start+2*rs.Period+1)
	}
	if err := render.TextUpTo(s, w, units); err != nil {
		return err
	}
	// The search's repetend is in its own steps (the coarse copy's);
	// the schedule's figures are the schedule's.
	k := in.Search.Step
	period := func(steps int) string {
		if k > 1 {
			return fmt.Sprintf("%s (%d steps of %s)", u.Duration(float64(steps*k)), steps, u.StepText(float64(k)))
		}
		return fmt.Sprintf("%d steps", steps)
	}
	switch {
	case rep != nil && res.RepetendUsed():
		fmt.Fprintf(w, "\nrepetend     N_R %d, period %s (the split's max load %s), repetend bubble rate %s\n",
			rep.NR, period(rep.Period), mt(r.TimePerSample), textfmt.Pct(schedule.RepetendBubbleRate(res.Schedule.Placement, rep.Period)))
	case rep != nil:
		fmt.Fprintf(w, "\nrepetend     found, not used: N_R %d, period %s (repetend bubble rate %s); the schedule is a construction's\n",
			rep.NR, period(rep.Period), textfmt.Pct(schedule.RepetendBubbleRate(res.Schedule.Placement, rep.Period)))
	default:
		fmt.Fprintf(w, "\nrepetend     none fits the budget (--budget, --nr); the schedule below is a construction's\n")
	}
	if r.PeriodTime != nil {
		fmt.Fprintf(w, "steady state %s; %s per micro-batch (the split's max load %s)\n", r.Schedule.steady.text(s), mt(*r.PeriodTime), mt(r.TimePerSample))
	} else {
		fmt.Fprintf(w, "steady state %s\n", r.Schedule.steady.text(s))
	}
	fmt.Fprintf(w, "schedule     %d micro-batches: makespan %s, bubble rate %s (lower bound %s)\n",
		s.MicroBatches, u.Duration(float64(sum.Makespan)), textfmt.Pct(sum.BubbleRate), u.Duration(float64(sum.LowerBound.Makespan)))
	how := "every block and transfer at its own time"
	if in.Search.Listed {
		how = "a list schedule in the order of the search's starts (its orders and decisions did not fit the exact times)"
	}
	fmt.Fprintf(w, "timed        %s, in steps of %s (makespan %d steps)\n", how, u.StepText(1), sum.Makespan)
	if mb := r.MergedBackward; mb != nil {
		fmt.Fprintf(w, "merged B     %s (+%s) with every I and its W run as one B (export --merge-bw, for runtimes that cannot split the backward)\n",
			u.Duration(float64(mb.Makespan)), textfmt.Pct(float64(mb.Makespan-sum.Makespan)/float64(sum.Makespan)))
	}
	fmt.Fprintf(w, "peak memory  %s (budget %s)\n", u.Memories(sum.PeakMemory), s.Placement.BudgetText(in.Budget))
	if in.Decisions {
		fmt.Fprintf(w, "decisions    %s\n", s.DecisionsText())
	}
	schedule.WriteDecisionsText(w, s)
	where := ""
	if k > 1 {
		where = fmt.Sprintf(" on steps of %s", u.StepText(float64(k)))
	}
	fmt.Fprintf(w, "search time  %.3fs%s (proven%s: %s)\n", r.SearchSeconds, where, strings.Replace(where, " on", " at", 1), textfmt.YesNo(res.Proven()))
	if res.Stopped != "" {
		fmt.Fprintf(w, "stopped      %s\n", res.Stopped)
	}
	fmt.Fprintf(w, "verified     %s\n", textfmt.YesNo(sum.Valid))
	return nil
}
