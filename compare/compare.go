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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
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
	// the 1F1B chain) after the baselines; under a latency budget they
	// are added with ideal tensor parallelism where it is nil.
	Inference *inference.Options
	// MemoryText writes a memory of the placement's units as the model
	// has it ("2.89 GB") in the notes that say what a schedule needs;
	// nil: the plain number.
	MemoryText func(units int) string
}

// Status of a row.
const (
	StatusOK            = "ok"
	StatusNotApplicable = "not applicable" // the paper's ×
	StatusNone          = "none"           // no schedule under the budget, or none in time
	// StatusNoFit: the baseline's rule finds no schedule under the
	// budget (its note says what it would need).
	StatusNoFit = "does not fit"
	// StatusFailed: the baseline could not be built (its note says why);
	// the other rows stand.
	StatusFailed = "failed"
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
	// Units is the figures in time and bytes, where the placement says
	// what its steps and memory units are (schedule.SummarizeUnits).
	Units *schedule.UnitsSummary `json:"units,omitempty"`
	Note  string                 `json:"note,omitempty"`

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
	// Budgets is every device's budget where they differ (the devices'
	// capacities under Memory; omitted where one number says it).
	Budgets []int `json:"budgets,omitempty"`
	// LatencyBudget is Options.Latency (omitted without one).
	LatencyBudget int `json:"latency_budget,omitempty"`
	// ShowLatency adds the latency columns to the tables: the placement
	// is an inference placement or there is a latency budget.
	ShowLatency bool `json:"-"`
	// MaskTimes writes every search time as TimePlaceholder (0 in JSON),
	// so that whole outputs compare byte for byte.
	MaskTimes bool `json:"-"`
	// Units is the placement's (placement's Units): the title's budget in
	// bytes where it says what a memory unit is.
	Units *quantity.Scale `json:"-"`
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

// Run compares every baseline that applies (the zero-bubble family only
// where p splits its backward; a Quiet baseline only where it applies, not
// as ×), the Tessel search (search.Run) and, with
// Optimal, the time-optimal search on p: one row each, every schedule
// verified, every one on p itself — its stages, devices, times,
// memories and links (the paper's Table II, each baseline on a
// placement of its own, is TableII). A baseline that does not apply is
// ×; one over the budget is shown with its row saying so, and where no
// schedule fits at all, what it would need; one that cannot be built
// is a row that says why. A search that finds nothing under the budget
// has status StatusNone.
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
		q, err := chosen(ctx, p, opt)
		if err != nil {
			return nil, err
		}
		p = q
	}
	cmp := &Comparison{Placement: p.Name, Devices: p.Devices, Memory: opt.Memory, MicroBatches: opt.MicroBatches,
		LatencyBudget: opt.Latency, ShowLatency: opt.Latency > 0 || p.Inference(), Units: p.Units}
	if !p.Uniform(opt.Memory) {
		cmp.Budgets = p.Budgets(opt.Memory)
	} else if b := p.Budget(0, opt.Memory); b != opt.Memory {
		cmp.Memory = b // the devices' one capacity
	}
	rows, err := Baselines(ctx, p, opt, nil)
	if err != nil {
		return nil, err
	}
	cmp.Rows = rows
	inf := opt.Inference
	if inf == nil && opt.Latency > 0 {
		inf = &inference.Options{} // as search's starts: ideal tensor parallelism
	}
	if inf != nil && p.Inference() {
		for _, m := range inference.Baselines() {
			if m.Name == "gpipe" {
				continue // the GPipe row above
			}
			progress("compare: %s", m.Title)
			s, err := m.Build(p, opt.MicroBatches, *inf)
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

// Baselines runs the baselines on p as Run does, one row each in
// baseline.All's order, every schedule verified: those that apply (the
// zero-bubble family only where p splits its backward, the offload and
// recompute baselines only where p declares them, a Quiet baseline only
// where it applies); names, when not nil, keeps only the baselines
// named. Nothing a baseline does ends the list: a row says it; only a
// cancelled ctx does.
func Baselines(ctx context.Context, p *placement.Placement, opt Options, names []string) ([]Row, error) {
	split := HasWeights(p)
	short := opt.shortfall(p)
	var rows []Row
	for _, m := range baseline.All() {
		if names != nil && !slices.Contains(names, m.Name) {
			continue
		}
		if m.Split && !split {
			continue // the zero-bubble family needs input and weight blocks
		}
		if m.Memory && !p.HasOffload() && !p.HasRecompute() {
			continue // offload and recompute baselines need --offload-time or --recompute
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compare: stopped before the comparison was complete: %w", context.Cause(ctx))
		}
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf("compare: %s", MethodTitle(m.Name)))
		}
		row := baselineRow(m, p, opt, short)
		if m.Quiet && row.Status == StatusNotApplicable {
			continue // listed only where it applies
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// chosen is the placement with the devices the Tessel search chooses for
// p's candidates (package choose).
func chosen(ctx context.Context, p *placement.Placement, opt Options) (*placement.Placement, error) {
	ctx, cancel := withLimit(ctx, opt.TimeLimit)
	defer cancel()
	sp := spec.Spec{Placement: p, MicroBatches: opt.MicroBatches, Memory: opt.Memory, Allowed: spec.Decisions{Offload: opt.Offload, Recompute: opt.Recompute}}
	so := choose.Options{Search: search.Options{MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed}}
	// HEFT's choice among the starts, as tessel search has it.
	if a, ok := choose.HEFTAssignment(sp); ok {
		so.Assignments = append(so.Assignments, a)
	}
	res, err := choose.Devices(ctx, sp, so)
	if err != nil {
		return nil, fmt.Errorf("compare: choosing the devices: %w", err)
	}
	return res.Schedule.Placement, nil
}

// HasWeights reports whether p splits a backward into input and weight
// blocks: whether some block is deferrable (placement's Roles), whatever
// the kinds are called.
func HasWeights(p *placement.Placement) bool { return p.HasDeferrable() }

// shortfall says, for the activations kept (keep) and with offload and
// recompute wherever p allows them (decide), what the device short by
// most needs per micro-batch and has ("device 5 needs 43 per micro-batch
// …, 20 left", schedule.LeastMemory); "" where every device's budget
// covers its need.
type shortfall struct{ keep, decide string }

func (opt Options) shortfall(p *placement.Placement) shortfall {
	text := func(offload, recompute bool) string {
		needs := schedule.LeastMemory(p, offload, recompute)
		if need, budget, ok := schedule.Short(p, opt.Memory, needs, false); ok {
			return schedule.NeedText(p, need, budget, opt.MemoryText)
		}
		return ""
	}
	return shortfall{keep: text(false, false), decide: text(p.HasOffload(), p.HasRecompute())}
}

// baselineRow runs one baseline on p. Nothing it does ends the table: a
// baseline that cannot be built, or fails the verifier, is a row that
// says so.
func baselineRow(m baseline.Baseline, p *placement.Placement, opt Options, short shortfall) Row {
	row := Row{Method: MethodTitle(m.Name), Placement: p.Name, MicroBatches: opt.MicroBatches}
	s, err := m.Build(spec.Spec{Placement: p, MicroBatches: opt.MicroBatches, Memory: opt.Memory})
	over := errors.Is(err, baseline.ErrOverBudget)
	need := short.keep
	if m.Memory {
		need = short.decide
	}
	switch {
	case errors.Is(err, baseline.ErrNotApplicable):
		row.Status, row.Note = StatusNotApplicable, "no straightforward adaptation to "+p.Name
		return row
	case errors.Is(err, baseline.ErrNoSchedule):
		row.Status, row.Note = StatusNoFit, "does not fit: its rule finds no schedule under the budget"
		if need != "" {
			row.Note = "does not fit: " + need
		}
		return row
	case err != nil && !over:
		row.Status, row.Note = StatusFailed, "could not be built: "+err.Error()
		return row
	}
	if err := verify.Schedule(s); err != nil {
		row.Status, row.Note = StatusFailed, "fails verification (a bug): "+err.Error()
		return row
	}
	row.fill(s, p, opt.Memory)
	recordCluster(s, opt.Cluster, opt.Given)
	if steady, period, err := baseline.SteadyBubbleRate(m, p); err == nil {
		row.RepetendBubbleRate = textfmt.Ptr(textfmt.Round6(steady))
		row.Note = "steady period " + strconv.FormatFloat(period, 'f', -1, 64)
		if u := p.Units; u.HasTime() {
			row.Note = "steady period " + u.Duration(period) // in time, as Tessel's row
		}
	}
	switch {
	case over && need != "":
		row.Note += "; does not fit: " + need
	case over:
		row.Note += "; does not adapt to the budget"
	}
	row.Note = strings.TrimPrefix(row.Note, "; ")
	row.latencyNote(opt.Latency)
	return row
}

// tesselRow runs the Tessel search on p.
func tesselRow(ctx context.Context, p *placement.Placement, opt Options, progress func(string, ...any)) (Row, error) {
	row := Row{Method: "Tessel", Placement: p.Name, MicroBatches: opt.MicroBatches}
	ctx, cancel := withLimit(ctx, opt.TimeLimit)
	defer cancel()
	t0 := time.Now()
	sp := spec.Spec{Placement: p, MicroBatches: opt.MicroBatches, Memory: opt.Memory, Latency: opt.Latency, Allowed: spec.Decisions{Offload: opt.Offload, Recompute: opt.Recompute}}
	so := search.Options{MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed, TimeLimit: opt.TimeLimit, Progress: func(pr search.Progress) { progress("compare: Tessel %s", pr.Status(time.Since(t0))) }}
	var er *exact.Result
	var err error
	if p.HasCandidates() {
		// choose.Devices: a placement whose blocks give candidates has
		// its devices searched again from the choice made.
		var res *search.Result
		if res, err = choose.Devices(ctx, sp, choose.Options{Search: so}); err == nil {
			er = &exact.Result{Search: res, Schedule: res.Schedule, Step: 1}
		}
	} else {
		// On a placement in real units, the search runs on its coarse
		// copy and its schedule is timed at the placement's own steps
		// (exact).
		er, err = exact.Run(ctx, sp, so)
	}
	var nf *search.NoFitError
	switch {
	case errors.As(err, &nf):
		row.Status, row.Note = StatusNone, "no schedule fits: "+schedule.NeedText(p, nf.Need, nf.Budget, opt.MemoryText)
		return row, nil
	case errors.Is(err, search.ErrNoRepetend):
		row.Status, row.Note = StatusNone, "no repetend fits the memory budget"
		return row, nil
	}
	if err != nil {
		return row, fmt.Errorf("compare: Tessel search: %w", err)
	}
	res, s := er.Search, er.Schedule
	u := s.Placement.Units
	span := func(steps int) string { return strconv.Itoa(steps) }
	if u.HasTime() {
		span = func(steps int) string { return u.Duration(float64(steps)) }
	}
	if err := verify.Schedule(s); err != nil {
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
		row.Note = fmt.Sprintf("N_R %d, period %s", st.NR, span(st.Period))
		if st.PerPeriod > 1 {
			row.Note += fmt.Sprintf(" for %d micro-batches", st.PerPeriod)
		}
	}
	if r := res.Repetend; r != nil && !res.RepetendUsed() {
		row.Note += fmt.Sprintf("; repetend found, not used: period %s", span(r.Period*er.Step))
	}
	row.Note = strings.TrimPrefix(row.Note, "; ")
	if res.Source.Kind != search.SourceRepetend {
		row.Note += "; schedule from " + res.Source.String()
	} else if res.Fallback {
		row.Note += "; N < N_R: time-optimal schedule of all N"
	}
	if !res.Proven() {
		row.Note += fmt.Sprintf("; not proven (gap %s)", span(schedule.Makespan(s)-rules.LowerBounds(s.Spec).Makespan))
	}
	if er.Coarse() {
		row.Note += "; searched at steps of " + u.StepText(float64(er.Step))
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
	res, err := choose.OptimalDevices(ctx, spec.Spec{Placement: p, MicroBatches: opt.OptimalMicroBatches, Memory: opt.Memory, Latency: opt.Latency, Allowed: spec.Decisions{Offload: opt.Offload, Recompute: opt.Recompute}}, choose.OptimalOptions{Search: search.OptimalOptions{Seed: opt.Seed, Progress: func(lo, hi int) {
		progress("compare: time-optimal search, makespan between %d and %d", lo, hi)
	}}})
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
	if err := verify.Schedule(s); err != nil {
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
	if s.Placement.Units != nil {
		r.Units = schedule.SummarizeUnits(s, rules.LowerBounds(s.Spec).Makespan)
	}
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
