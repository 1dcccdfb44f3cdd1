package report

import (
	"fmt"
	"io"

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
	// Model-time figures: the schedule's makespan and its time per
	// micro-batch in the steady state (period × time unit; omitted where
	// the schedule has none), beside the split's max load.
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
	sum := SearchSummary(in.Search, in.Strategy)
	if in.Decisions {
		sum.WithDecisions(in.Search.Schedule)
	}
	// The time per micro-batch of the schedule's own steady state.
	unit := pr.Converted.TimeUnit
	var periodTime *float64 // none without a steady state
	if st := sum.steady.of(in.Search.Schedule); st != nil {
		t := textfmt.Round6(st.TimePerMicroBatch() * unit)
		periodTime = &t
	}
	r := &Plan{
		Partition: pr, Schedule: sum,
		MakespanTime: textfmt.Round6(float64(sum.Makespan) * unit), PeriodTime: periodTime,
		TimePerSample: pr.MaxLoad, ScheduleProven: in.Search.Proven(), SearchSeconds: textfmt.Secs(in.SearchTime),
		Memory: partition.NewMemoryReport(in.Memory, pr.Graph.Bytes, pr.Converted.MemoryUnit),
		plan:   in,
	}
	for _, b := range pr.Baselines {
		if b.Method == "even" {
			r.EvenPerSample = b.MaxLoad
		}
	}
	if m, err := torchcsv.MergeBackward(in.Search.Schedule); err == nil && m != in.Search.Schedule {
		span := schedule.Makespan(m)
		r.MergedBackward = &MergedCost{Makespan: span, MakespanTime: textfmt.Round6(float64(span) * unit)}
	}
	return r
}

// WriteText writes the report as tessel plan prints it: the partition,
// the time per sample beside the even split's, each device's memory, the
// schedule's picture (its warmup and two iterations of the repetend, at
// most units time units) and its figures in steps and in model time.
func (r *Plan) WriteText(w io.Writer, units int) error {
	in := r.plan
	pr, res, sum, p := r.Partition, in.Search, r.Schedule, in.Placement
	s, rep := res.Schedule, res.Repetend
	pr.WriteText(w)
	fmt.Fprintln(w)
	if r.EvenPerSample > 0 {
		fmt.Fprintf(w, "time per sample  %.2f (the even split by layer count: %.2f, %.2f× slower)\n", r.TimePerSample, r.EvenPerSample, r.EvenPerSample/r.TimePerSample)
	}
	if in.Memory != nil {
		partition.WriteMemoryText(w, in.Memory, pr.Graph.Bytes)
	}
	if s.Repetend != nil {
		units = min(units, s.Repetend.Start+2*s.Repetend.Period+1)
	}
	if err := render.TextUpTo(s, w, units); err != nil {
		return err
	}
	switch {
	case rep != nil && res.RepetendUsed():
		fmt.Fprintf(w, "\nrepetend     N_R %d, period %d steps = %.2f per micro-batch (the split's max load %.2f), repetend bubble rate %s\n",
			r.Schedule.steady.of(s).NR, rep.Period, *r.PeriodTime, pr.MaxLoad, textfmt.Pct(schedule.RepetendBubbleRate(p, rep.Period)))
	case rep != nil:
		fmt.Fprintf(w, "\nrepetend     found, not used: N_R %d, period %d steps (repetend bubble rate %s); the schedule is a construction's\n",
			rep.NR, rep.Period, textfmt.Pct(schedule.RepetendBubbleRate(p, rep.Period)))
	default:
		fmt.Fprintf(w, "\nrepetend     none fits the budget (--budget, --nr); the schedule below is a construction's\n")
	}
	switch {
	case (rep == nil || !res.RepetendUsed()) && r.PeriodTime != nil:
		fmt.Fprintf(w, "steady state %s; %.2f per micro-batch (the split's max load %.2f)\n", r.Schedule.steady.text(s), *r.PeriodTime, pr.MaxLoad)
	case rep == nil || !res.RepetendUsed():
		fmt.Fprintf(w, "steady state %s\n", r.Schedule.steady.text(s))
	}
	fmt.Fprintf(w, "schedule     %d micro-batches: makespan %d steps = %.2f, bubble rate %s (lower bound %d steps)\n",
		s.MicroBatches, sum.Makespan, r.MakespanTime, textfmt.Pct(sum.BubbleRate), sum.LowerBound.Makespan)
	if mb := r.MergedBackward; mb != nil {
		fmt.Fprintf(w, "merged B     %d steps = %.2f (+%s) with every I and its W run as one B (export --merge-bw, for runtimes that cannot split the backward)\n",
			mb.Makespan, mb.MakespanTime, textfmt.Pct(float64(mb.Makespan-sum.Makespan)/float64(sum.Makespan)))
	}
	fmt.Fprintf(w, "peak memory  %s (budget %s)\n", textfmt.Ints(sum.PeakMemory), p.BudgetText(in.Budget))
	if in.Decisions {
		fmt.Fprintf(w, "decisions    %s\n", s.DecisionsText())
	}
	schedule.WriteDecisionsText(w, s)
	fmt.Fprintf(w, "search time  %.3fs (proven: %s)\n", r.SearchSeconds, textfmt.YesNo(res.Proven()))
	if res.Stopped != "" {
		fmt.Fprintf(w, "stopped      %s\n", res.Stopped)
	}
	fmt.Fprintf(w, "verified     %s\n", textfmt.YesNo(sum.Valid))
	return nil
}
