// Package compare runs Tessel's search beside the baseline schedules on
// one placement and measures each, verified: the comparison of tessel
// compare, the paper's Table II (TableII), and the ablation sweeps of its
// Fig. 11 and 12 (Sweep). Its reports render as a table, CSV, JSON or
// Markdown, and its schedules as charts (SVG, HTML).
package compare

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/coarsen"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/spec"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
)

// Options configure Run.
type Options struct {
	MicroBatches int // N
	Memory       int // per-device budget; 0 means unlimited
	MaxNR        int // largest N_R of the Tessel search; 0: from the budget
	Seed         int // random seed of the solver
	// TimeLimit stops the Tessel search, which keeps the best schedule
	// found; 0: none.
	TimeLimit time.Duration
	// Optimal adds the time-optimal search (search.Optimal) of
	// OptimalMicroBatches, stopped after OptimalTimeLimit (0: none).
	Optimal             bool
	OptimalMicroBatches int
	OptimalTimeLimit    time.Duration
	// Home loads the built-in placement name on which a baseline runs
	// when it does not apply to the placement compared (the paper's
	// Table II runs 1F1B on v-shape, Chimera-direct on x-shape), its
	// backward split where split: the placement on the cluster and as
	// given. nil: placement.Builtin with the compared placement's device
	// count and default times, on no cluster. An error leaves the
	// baseline not applicable.
	Home func(name string, split bool) (p, given *placement.Placement, err error)
	// Cluster and Given, when set, are recorded in every row's schedule:
	// the placement runs on Cluster, Given before it.
	Cluster *cluster.Cluster
	Given   *placement.Placement
	// Progress, when set, is told what runs now, one line at a time.
	Progress func(line string)
	// Offload and Recompute let the Tessel search (and the time-optimal
	// one) offload or recompute activations (search.Options.Offload);
	// the Tessel row then counts them.
	Offload, Recompute bool
	// Latency is the latency budget of the Tessel search and the
	// time-optimal one (search.Options.Latency; 0: none); a baseline over
	// it says so in its note.
	Latency int
	// Inference, when set on an inference placement, adds the inference
	// baselines other than GPipe (package inference: tensor parallelism,
	// the 1F1B chain) after the baselines.
	Inference *inference.Options
}

// Status of a row.
const (
	StatusOK            = "ok"
	StatusNotApplicable = "not applicable" // the paper's ×
	StatusNone          = "none"           // no schedule under the budget, or none in time
)

// Row is one method's line of the comparison; it is also the JSON form.
// Pointers are nil where a value does not exist (×, no schedule).
type Row struct {
	Method    string `json:"method"`
	Placement string `json:"placement"`
	// Status is StatusOK, StatusNotApplicable or StatusNone.
	Status             string   `json:"status"`
	MicroBatches       int      `json:"micro_batches"`
	RepetendBubbleRate *float64 `json:"repetend_bubble_rate,omitempty"`
	Makespan           *int     `json:"makespan,omitempty"`
	BubbleRate         *float64 `json:"bubble_rate,omitempty"`
	PeakMemory         []int    `json:"peak_memory,omitempty"`
	BudgetRespected    *bool    `json:"budget_respected,omitempty"`
	Proven             *bool    `json:"proven,omitempty"`
	Seconds            *float64 `json:"seconds,omitempty"`
	Offloaded          *int     `json:"offloaded,omitempty"`  // with Offload or Recompute
	Recomputed         *int     `json:"recomputed,omitempty"` // with Offload or Recompute
	// Latency is the schedule's latency figures (schedule.SummarizeLatency).
	Latency *schedule.LatencySummary `json:"latency,omitempty"`
	Note    string                   `json:"note,omitempty"`

	// Schedule is the row's verified schedule; nil when there is none.
	Schedule *schedule.Schedule `json:"-"`
}

// Comparison is the whole comparison.
type Comparison struct {
	Placement    string `json:"placement"`
	Devices      int    `json:"devices"`
	Memory       int    `json:"memory"`
	MicroBatches int    `json:"micro_batches"`
	Rows         []Row  `json:"rows"`
	// LatencyBudget is Options.Latency (omitted without one).
	LatencyBudget int `json:"latency_budget,omitempty"`
	// ShowLatency adds the latency columns to the tables: the placement
	// is an inference placement or there is a latency budget.
	ShowLatency bool `json:"-"`
	// MaskTimes writes every search time as TimePlaceholder (0 in JSON),
	// so that whole outputs compare byte for byte.
	MaskTimes bool `json:"-"`
}

// TimePlaceholder stands for a search time when times are masked.
const TimePlaceholder = "<time>"

// methodTitles are the paper's names of the baselines.
var methodTitles = map[string]string{
	"gpipe":              "GPipe",
	"1f1b":               "1F1B",
	"1f1b-interleaved":   "1F1B interleaved",
	"chimera-direct":     "Chimera-direct",
	"1f1b-plus":          "1F1B+",
	"zb-h1":              "ZB-H1",
	"zb-h2":              "ZB-H2",
	"zb-v":               "ZB-V",
	"pipeoffload":        "PipeOffload",
	"adaoffload":         "AdaOffload",
	"1f1b-recompute":     "1F1B + recompute",
	"dualpipe":           "DualPipe",
	"dualpipe-v":         "DualPipeV",
	"dualpipe-v-overlap": "DualPipeV (overlapped F&B)",
	"looped-bfs":         "Looped BFS (PyTorch)",
	"zb1p":               "ZB1P (PyTorch)",
	"v-half":             "V-Half",
	"v-min":              "V-Min",
	"zb-auto":            "ZB auto (greedy)",
}

// MethodTitle is the paper's name of a baseline (its own name where the
// paper has none).
func MethodTitle(name string) string {
	if t, ok := methodTitles[name]; ok {
		return t
	}
	return name
}

// homePlacement is the placement the paper runs a baseline on when it does
// not apply to the model's own (Table II).
func homePlacement(name string) (string, bool) {
	switch name {
	case "1f1b":
		return "v-shape", true
	case "chimera-direct":
		return "x-shape", true
	}
	return "", false
}

// Run compares every baseline that applies (the zero-bubble family only
// where p splits its backward; a Quiet baseline only where it applies, not
// as ×), the Tessel search (search.Run) and, with
// Optimal, the time-optimal search on p: one row each, every schedule
// verified. A baseline over the budget is shown with its row saying so;
// a search that finds nothing under the budget has status StatusNone.
func Run(ctx context.Context, p *placement.Placement, opt Options) (*Comparison, error) {
	progress := func(format string, args ...any) {
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf(format, args...))
		}
	}
	if err := limits.CheckInstances(opt.MicroBatches, len(p.Blocks)); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if p.Open() {
		// The devices are the search's to choose: the Tessel search
		// chooses them, and every row runs on its choice.
		progress("compare: choosing the devices (Tessel search)")
		chosen, err := choose(ctx, p, opt)
		if err != nil {
			return nil, err
		}
		p = chosen
	}
	cmp := &Comparison{Placement: p.Name, Devices: p.Devices, Memory: opt.Memory, MicroBatches: opt.MicroBatches,
		LatencyBudget: opt.Latency, ShowLatency: opt.Latency > 0 || p.Inference()}
	split := HasWeights(p)
	for _, m := range baseline.All() {
		if m.Split && !split {
			continue // the zero-bubble family needs input and weight blocks
		}
		if m.Memory && !p.HasOffload() && !p.HasRecompute() {
			continue // offload and recompute baselines need --offload-time or --recompute
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compare: stopped before the comparison was complete: %w", context.Cause(ctx))
		}
		progress("compare: %s", MethodTitle(m.Name))
		row, err := baselineRow(m, p, opt)
		if err != nil {
			return nil, err
		}
		if m.Quiet && row.Status == StatusNotApplicable {
			continue // listed only where it applies
		}
		cmp.Rows = append(cmp.Rows, row)
	}
	if opt.Inference != nil && p.Inference() {
		for _, m := range inference.Baselines() {
			if m.Name == "gpipe" {
				continue // the GPipe row above
			}
			progress("compare: %s", m.Title)
			s, err := m.Build(p, opt.MicroBatches, *opt.Inference)
			if err != nil {
				return nil, fmt.Errorf("compare: %w", err)
			}
			row := Row{Method: m.Title, Placement: s.Placement.Name, MicroBatches: opt.MicroBatches}
			row.fill(s, s.Placement, 0)
			row.latencyNote(opt.Latency)
			cmp.Rows = append(cmp.Rows, row)
		}
	}
	progress("compare: Tessel search")
	row, err := tesselRow(ctx, p, opt, progress)
	if err != nil {
		return nil, err
	}
	cmp.Rows = append(cmp.Rows, row)
	if opt.Optimal {
		progress("compare: time-optimal search of %d micro-batches", opt.OptimalMicroBatches)
		row, err := optimalRow(ctx, p, opt, progress)
		if err != nil {
			return nil, err
		}
		cmp.Rows = append(cmp.Rows, row)
	}
	return cmp, nil
}

// choose is the placement with the devices the Tessel search chooses for
// p's candidates (search's "Where, not only when").
func choose(ctx context.Context, p *placement.Placement, opt Options) (*placement.Placement, error) {
	ctx, cancel := withLimit(ctx, opt.TimeLimit)
	defer cancel()
	sp := spec.Spec{Placement: p, MicroBatches: opt.MicroBatches, Memory: opt.Memory, Allowed: spec.Decisions{Offload: opt.Offload, Recompute: opt.Recompute}}
	so := search.Options{MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed}
	// HEFT's choice among the starts, as tessel search has it.
	if a, ok := coarsen.HEFTAssignment(sp); ok {
		so.Assignments = append(so.Assignments, a)
	}
	res, err := search.Run(ctx, sp, so)
	if err != nil {
		return nil, fmt.Errorf("compare: choosing the devices: %w", err)
	}
	return res.Schedule.Placement, nil
}

// HasWeights reports whether p splits a backward into input and weight
// blocks: whether some block is deferrable (placement's Roles), whatever
// the kinds are called.
func HasWeights(p *placement.Placement) bool { return p.HasDeferrable() }

// home loads a baseline's home placement (Options.Home).
func (opt Options) home(name string, split bool, p *placement.Placement) (*placement.Placement, *placement.Placement, error) {
	if opt.Home != nil {
		return opt.Home(name, split)
	}
	hp, err := placement.Builtin(name, placement.Options{Devices: p.Devices, SplitBackward: split})
	return hp, hp, err
}

// baselineRow runs one baseline on p, or on its home placement when it
// does not apply to p.
func baselineRow(m baseline.Baseline, p *placement.Placement, opt Options) (Row, error) {
	row := Row{Method: MethodTitle(m.Name), Placement: p.Name, MicroBatches: opt.MicroBatches}
	on, onGiven := p, opt.Given
	s, err := m.Build(spec.Spec{Placement: on, MicroBatches: opt.MicroBatches, Memory: opt.Memory})
	if home, ok := homePlacement(m.Name); ok && errors.Is(err, baseline.ErrNotApplicable) && home != p.Name {
		// A split placement is compared with the split home placement.
		if hp, hgiven, herr := opt.home(home, HasWeights(p), p); herr == nil {
			on = hp
			row.Placement = hp.Name
			s, err = m.Build(spec.Spec{Placement: on, MicroBatches: opt.MicroBatches, Memory: opt.Memory})
			onGiven = hgiven
		}
	}
	over := errors.Is(err, baseline.ErrOverBudget)
	switch {
	case errors.Is(err, baseline.ErrNotApplicable):
		row.Status, row.Note = StatusNotApplicable, "no straightforward adaptation to "+p.Name
		return row, nil
	case err != nil && !over:
		return row, fmt.Errorf("compare: %w", err)
	}
	if err := schedule.Verify(s); err != nil {
		return row, fmt.Errorf("compare: %s on %s fails verification (a bug): %w", m.Name, on.Name, err)
	}
	steady, period, err := baseline.SteadyBubbleRate(m, on)
	if err != nil {
		return row, fmt.Errorf("compare: %w", err)
	}
	row.fill(s, on, opt.Memory)
	recordCluster(s, opt.Cluster, onGiven)
	row.RepetendBubbleRate = textfmt.Ptr(textfmt.Round6(steady))
	row.Note = "steady period " + strconv.FormatFloat(period, 'f', -1, 64)
	if over {
		row.Note += "; does not adapt to the budget"
	}
	row.latencyNote(opt.Latency)
	return row, nil
}

// tesselRow runs the Tessel search on p.
func tesselRow(ctx context.Context, p *placement.Placement, opt Options, progress func(string, ...any)) (Row, error) {
	row := Row{Method: "Tessel", Placement: p.Name, MicroBatches: opt.MicroBatches}
	ctx, cancel := withLimit(ctx, opt.TimeLimit)
	defer cancel()
	t0 := time.Now()
	res, err := search.Run(ctx, spec.Spec{Placement: p, MicroBatches: opt.MicroBatches, Memory: opt.Memory, Latency: opt.Latency, Allowed: spec.Decisions{Offload: opt.Offload, Recompute: opt.Recompute}}, search.Options{MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed, TimeLimit: opt.TimeLimit, Progress: func(pr search.Progress) { progress("compare: Tessel %s", pr.Status(time.Since(t0))) }})
	if errors.Is(err, search.ErrNoRepetend) {
		row.Status, row.Note = StatusNone, "no repetend fits the memory budget"
		return row, nil
	}
	if err != nil {
		return row, fmt.Errorf("compare: Tessel search: %w", err)
	}
	s := res.Schedule
	if err := schedule.Verify(s); err != nil {
		return row, fmt.Errorf("compare: the Tessel schedule fails verification (a bug): %w", err)
	}
	row.fill(s, p, opt.Memory)
	recordCluster(s, opt.Cluster, opt.Given)
	decides := opt.Offload || opt.Recompute
	if decides {
		off, rec := s.Count()
		row.Offloaded, row.Recomputed = &off, &rec
	}
	// The steady state of the schedule returned, and the solver's
	// repetend where the schedule does not repeat it.
	if st := schedule.SteadyOf(s); st != nil {
		row.RepetendBubbleRate = textfmt.Ptr(textfmt.Round6(st.BubbleRate))
		row.Note = fmt.Sprintf("N_R %d, period %d", st.NR, st.Period)
		if st.PerPeriod > 1 {
			row.Note += fmt.Sprintf(" for %d micro-batches", st.PerPeriod)
		}
	}
	if r := res.Repetend; r != nil && !res.RepetendUsed() {
		row.Note += fmt.Sprintf("; repetend found, not used: period %d", r.Period)
	}
	row.Note = strings.TrimPrefix(row.Note, "; ")
	if res.Source.Kind != search.SourceRepetend {
		row.Note += "; schedule from " + res.Source.String()
	} else if res.Fallback {
		row.Note += "; N < N_R: time-optimal schedule of all N"
	}
	if !res.Proven() {
		row.Note += fmt.Sprintf("; not proven (gap %d)", res.Gap())
	}
	if decides {
		row.Note += fmt.Sprintf("; %d offloaded, %d recomputed", *row.Offloaded, *row.Recomputed)
	}
	if res.Stopped != "" {
		row.Note += "; stopped " + res.Stopped
	}
	row.Proven = textfmt.Ptr(res.Proven())
	row.Seconds = textfmt.Ptr(textfmt.Secs(res.Times.Total))
	return row, nil
}

// optimalRow runs the time-optimal search of a few micro-batches: the
// search tessel optimal runs (search.Optimal).
func optimalRow(ctx context.Context, p *placement.Placement, opt Options, progress func(string, ...any)) (Row, error) {
	row := Row{Method: "time-optimal", Placement: p.Name, MicroBatches: opt.OptimalMicroBatches}
	ctx, cancel := withLimit(ctx, opt.OptimalTimeLimit)
	defer cancel()
	t0 := time.Now()
	res, err := search.Optimal(ctx, spec.Spec{Placement: p, MicroBatches: opt.OptimalMicroBatches, Memory: opt.Memory, Latency: opt.Latency, Allowed: spec.Decisions{Offload: opt.Offload, Recompute: opt.Recompute}}, search.OptimalOptions{Seed: opt.Seed, Progress: func(lo, hi int) {
		progress("compare: time-optimal search, makespan between %d and %d", lo, hi)
	}})
	elapsed := time.Since(t0)
	switch {
	case errors.Is(err, search.ErrInfeasible):
		row.Status, row.Note = StatusNone, "no schedule fits the memory budget"
		return row, nil
	case errors.Is(err, search.ErrStopped):
		row.Status, row.Note = StatusNone, "no schedule within the time limit"
		row.Seconds = textfmt.Ptr(textfmt.Secs(elapsed))
		return row, nil
	case err != nil:
		return row, fmt.Errorf("compare: time-optimal search: %w", err)
	}
	s, sol := res.Schedule, res.Solution
	if err := schedule.Verify(s); err != nil {
		return row, fmt.Errorf("compare: the time-optimal schedule fails verification (a bug): %w", err)
	}
	row.fill(s, p, opt.Memory)
	recordCluster(s, opt.Cluster, opt.Given)
	row.Proven = textfmt.Ptr(sol.Proven)
	row.Seconds = textfmt.Ptr(textfmt.Secs(elapsed))
	row.Note = fmt.Sprintf("only N = %d", opt.OptimalMicroBatches)
	if !sol.Proven {
		row.Note += fmt.Sprintf("; time limit: optimum between %d and %d", sol.LowerBound, sol.Makespan)
	}
	return row, nil
}

// fill measures a verified schedule s; the budget respected is every
// device's on p (a baseline over the budget is verified without one).
func (r *Row) fill(s *schedule.Schedule, p *placement.Placement, memory int) {
	r.Schedule = s
	m := schedule.Measure(s)
	r.Status = StatusOK
	r.Makespan = textfmt.Ptr(m.Makespan)
	r.BubbleRate = textfmt.Ptr(textfmt.Round6(m.BubbleRate))
	r.PeakMemory = m.PeakMemory
	ok := true
	for d, v := range m.PeakMemory {
		b := p.Budget(d, memory)
		ok = ok && (b <= 0 || v <= b)
	}
	r.BudgetRespected = textfmt.Ptr(ok)
	r.Latency = textfmt.Ptr(schedule.SummarizeLatency(s))
}

// latencyNote says in the note that a baseline's schedule is over the
// latency budget (a baseline keeps its rule).
func (r *Row) latencyNote(budget int) {
	if budget > 0 && r.Latency != nil && r.Latency.Max > budget {
		r.Note = strings.TrimPrefix(r.Note+"; over the latency budget", "; ")
	}
}

// recordCluster records in s that it runs on c, its placement being given
// on it (nothing without a cluster). A baseline over the budget, shown
// without one (baseline.ErrOverBudget), is recorded on c without its
// memories.
func recordCluster(s *schedule.Schedule, c *cluster.Cluster, given *placement.Placement) {
	if s == nil || c == nil || s.Cluster != nil {
		return
	}
	if s.SetCluster(c, given) == nil {
		return
	}
	free := c.Clone()
	for d := range free.Devices {
		free.Devices[d].Memory = 0
	}
	_ = s.SetCluster(free, given)
}

// withLimit bounds ctx by a time limit; 0 means none.
func withLimit(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit > 0 {
		return context.WithTimeout(ctx, limit)
	}
	return context.WithCancel(ctx)
}
