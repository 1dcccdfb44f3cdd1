package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/smt"
)

type compareOptions struct {
	Placement    placementSpec
	MicroBatches int
	Memory       int
	NR           int
	Jobs         int
	Seed         int
	TimeLimit    time.Duration // of the Tessel search
	Optimal      bool
	OptimalN     int
	OptimalLimit time.Duration
	Format       string
	TableII      bool
	SVG, HTML    string // charts of every row's schedule
	Schedules    string // directory for every row's schedule file
	Force        bool
	Decisions    placement.Decisions
	// fixedTimes prints every search time as timePlaceholder, so that
	// tests can compare whole outputs byte for byte.
	fixedTimes bool
	// given and cluster: the placement before its cluster and the
	// cluster, recorded in the schedule files (nil without one).
	given   *placement.Placement
	cluster *cluster.Cluster
}

const timePlaceholder = "<time>"

// tableFormats are the --format values of compare and sweep.
var tableFormats = []string{"table", "csv", "json", "markdown"}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare Tessel with the baseline schedules (GPipe, 1F1B, Chimera-direct, 1F1B+, the zero-bubble family) on one placement",
		UsageText: "tessel compare --placement m-shape [--devices 4] [--memory 6] [--micro-batches 128] [--optimal] [--format table|csv|json|markdown]\n" +
			"   tessel compare --table-ii [--format markdown]",
		Description: "One row per method, each verified: the repetend bubble rate (Tessel's repetend; for a\n" +
			"baseline its steady state as N grows, what the paper's Table II reports), the makespan and\n" +
			"bubble rate of N micro-batches, the peak memory of every device, whether the memory budget\n" +
			"holds, and the search time of the searched methods.\n\n" +
			"Placements: 1F1B and Chimera-direct run on the placement given when they apply to it, and\n" +
			"otherwise on their own (v-shape, x-shape with the same devices and times), as in Table II;\n" +
			"every other method runs on the placement given. The placement column says which.\n" +
			"× marks a baseline with no straightforward adaptation to the placement. The zero-bubble\n" +
			"family (ZB-H1, ZB-H2 on the split v-shape; ZB-V, DualPipeV on the V placement; DualPipe on\n" +
			"dualpipe) is listed only for placements whose backward is split. Baselines do not\n" +
			"adapt to the memory budget: when one exceeds it, its row says so.\n\n" +
			"--optimal adds the time-optimal search (the paper's TO) of --optimal-micro-batches only:\n" +
			"its time grows quickly with N.\n" +
			"--table-ii prints the paper's Table II (GPT m-shape, mT5 nn-shape, Flava k-shape on 4\n" +
			"devices) with our figures beside the paper's.",
		Flags: append(append(placementFlags(),
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N", Value: 128},
			&cli.IntFlag{Name: "memory", Aliases: []string{"m"}, Usage: "per-device memory budget (0: unlimited)"},
			&cli.IntFlag{Name: "nr", Usage: "largest N_R of the Tessel search (0: as many as the memory budget allows, at most 2·devices)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "solver workers of the Tessel search (0: one per core)"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop the Tessel search after this long and keep the best schedule found"},
			&cli.BoolFlag{Name: "optimal", Usage: "add the time-optimal search of a few micro-batches"},
			&cli.IntFlag{Name: "optimal-micro-batches", Usage: "micro-batches of the time-optimal search", Value: 4},
			&cli.DurationFlag{Name: "optimal-time-limit", Usage: "time limit of the time-optimal search", Value: time.Minute},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: " + strings.Join(tableFormats, ", "), Value: "table"},
			&cli.BoolFlag{Name: "table-ii", Usage: "print the paper's Table II, ours beside the paper's"},
			&cli.StringFlag{Name: "svg", Usage: "write the Gantt charts of every method's schedule, one under the other, to an SVG `FILE`"},
			&cli.StringFlag{Name: "html", Usage: "write a page with the table and every method's chart to an HTML `FILE`"},
			&cli.StringFlag{Name: "schedules", Usage: "write every method's schedule file into `DIR` (re-check with tessel verify)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite files that exist"},
		), savingsFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("compare: unexpected argument %q", c.Args().First())
			}
			return runCompare(c.Context, compareOptions{
				Placement: placementSpecFrom(c), MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				NR: c.Int("nr"), Jobs: c.Int("jobs"), Seed: c.Int("seed"), TimeLimit: c.Duration("time-limit"),
				Optimal: c.Bool("optimal"), OptimalN: c.Int("optimal-micro-batches"), OptimalLimit: c.Duration("optimal-time-limit"),
				Format: c.String("format"), TableII: c.Bool("table-ii"),
				SVG: c.String("svg"), HTML: c.String("html"), Schedules: c.String("schedules"), Force: c.Bool("force"),
				Decisions: savingsFrom(c),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// compareRow is one method's line of the comparison; it is also the JSON
// form. Pointers are absent where a value does not exist (×, no schedule).
type compareRow struct {
	Method    string `json:"method"`
	Placement string `json:"placement"`
	// Status is "ok", "not applicable" (the paper's ×) or "none" (no
	// schedule under the budget, or none within the time limit).
	Status             string   `json:"status"`
	MicroBatches       int      `json:"micro_batches"`
	RepetendBubbleRate *float64 `json:"repetend_bubble_rate,omitempty"`
	Makespan           *int     `json:"makespan,omitempty"`
	BubbleRate         *float64 `json:"bubble_rate,omitempty"`
	PeakMemory         []int    `json:"peak_memory,omitempty"`
	BudgetRespected    *bool    `json:"budget_respected,omitempty"`
	Proven             *bool    `json:"proven,omitempty"`
	Seconds            *float64 `json:"seconds,omitempty"`
	Offloaded          *int     `json:"offloaded,omitempty"`  // with --offload or --recompute
	Recomputed         *int     `json:"recomputed,omitempty"` // with --offload or --recompute
	Note               string   `json:"note,omitempty"`

	schedule *schedule.Schedule // verified; nil when there is none
}

// comparison is the whole output of tessel compare.
type comparison struct {
	Placement    string       `json:"placement"`
	Devices      int          `json:"devices"`
	Memory       int          `json:"memory"`
	MicroBatches int          `json:"micro_batches"`
	Rows         []compareRow `json:"rows"`
	fixedTimes   bool
}

const (
	statusOK            = "ok"
	statusNotApplicable = "not applicable"
	statusNone          = "none"
)

// methodTitles are the paper's names of the baselines.
var methodTitles = map[string]string{
	"gpipe":            "GPipe",
	"1f1b":             "1F1B",
	"1f1b-interleaved": "1F1B interleaved",
	"chimera-direct":   "Chimera-direct",
	"1f1b-plus":        "1F1B+",
	"zb-h1":            "ZB-H1",
	"zb-h2":            "ZB-H2",
	"zb-v":             "ZB-V",
	"pipeoffload":      "PipeOffload",
	"adaoffload":       "AdaOffload",
	"1f1b-recompute":   "1F1B + recompute",
	"dualpipe":         "DualPipe",
	"dualpipe-v":       "DualPipeV",
}

func methodTitle(name string) string {
	if t, ok := methodTitles[name]; ok {
		return t
	}
	return name
}

// homePlacements are the placements the paper runs a baseline on when it
// does not apply to the model's own (Table II).
var homePlacements = map[string]string{"1f1b": "v-shape", "chimera-direct": "x-shape"}

func runCompare(ctx context.Context, opts compareOptions, stdout, stderr io.Writer) error {
	if !contains(tableFormats, opts.Format) {
		return usageErrorf("compare: unknown --format %q (want %s)", opts.Format, strings.Join(tableFormats, ", "))
	}
	if opts.TableII {
		return runTableII(ctx, opts, stdout, stderr)
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"micro-batches", opts.MicroBatches, 1}, {"memory", opts.Memory, 0}, {"nr", opts.NR, 0}, {"jobs", opts.Jobs, 0}, {"optimal-micro-batches", opts.OptimalN, 1}} {
		if err := checkAtLeast(f.name, f.v, f.min); err != nil {
			return err
		}
	}
	if err := (outputs{SVG: opts.SVG, HTML: opts.HTML, Force: opts.Force}).check(); err != nil {
		return err
	}
	p, given, cl, err := opts.Placement.loadOn()
	if err != nil {
		return err
	}
	if opts.Decisions != (placement.Decisions{}) {
		if p, given, err = opts.Placement.loadDeclared(opts.Decisions); err != nil {
			return err
		}
	}
	opts.given, opts.cluster = given, cl
	bar := newProgress(stderr)
	defer bar.done()
	cmp := comparison{Placement: p.Name, Devices: p.Devices, Memory: opts.Memory, MicroBatches: opts.MicroBatches, fixedTimes: opts.fixedTimes}
	split := hasWeights(p)
	for _, m := range baseline.Methods() {
		if m.Split && !split {
			continue // the zero-bubble family needs input and weight blocks
		}
		if m.Memory && !p.HasOffload() && !p.HasRecompute() {
			continue // offload and recompute baselines need --offload-time or --recompute
		}
		bar.show("compare: %s", methodTitle(m.Name))
		row, err := baselineRow(m, p, opts)
		if err != nil {
			return err
		}
		cmp.Rows = append(cmp.Rows, row)
	}
	bar.show("compare: Tessel search")
	row, err := tesselRow(ctx, p, opts, bar)
	if err != nil {
		return err
	}
	cmp.Rows = append(cmp.Rows, row)
	if opts.Optimal {
		bar.show("compare: time-optimal search of %d micro-batches", opts.OptimalN)
		row, err := optimalRow(ctx, p, opts, bar)
		if err != nil {
			return err
		}
		cmp.Rows = append(cmp.Rows, row)
	}
	bar.done()
	if err := cmp.writeFiles(opts); err != nil {
		return err
	}
	return cmp.write(stdout, opts.Format)
}

// hasWeights reports whether p splits a backward into input and weight
// blocks.
func hasWeights(p *placement.Placement) bool {
	for _, b := range p.Blocks {
		if b.Kind == placement.Weight {
			return true
		}
	}
	return false
}

// baselineRow runs one baseline on p, or on its home placement when it
// does not apply to p.
func baselineRow(m baseline.Method, p *placement.Placement, opts compareOptions) (compareRow, error) {
	row := compareRow{Method: methodTitle(m.Name), Placement: p.Name, MicroBatches: opts.MicroBatches}
	on, onGiven := p, opts.given
	s, err := m.Build(on, opts.MicroBatches, opts.Memory)
	if home, ok := homePlacements[m.Name]; ok && errors.Is(err, baseline.ErrNotApplicable) && home != p.Name {
		spec := opts.Placement
		spec.Name, spec.File = home, ""
		// A split placement is compared with the split home placement.
		spec.SplitBackward = spec.SplitBackward || hasWeights(p)
		spec.Chunks, spec.Order = 1, string(placement.Loop)
		if hp, hgiven, _, herr := spec.loadOn(); herr == nil {
			on = hp
			row.Placement = hp.Name
			s, err = m.Build(on, opts.MicroBatches, opts.Memory)
			onGiven = hgiven
		}
	}
	over := errors.Is(err, baseline.ErrOverBudget)
	switch {
	case errors.Is(err, baseline.ErrNotApplicable):
		row.Status, row.Note = statusNotApplicable, "no straightforward adaptation to "+p.Name
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
	row.fill(s, on, opts.Memory)
	recordCluster(s, opts.cluster, onGiven)
	row.RepetendBubbleRate = ptr(round6(steady))
	row.Note = "steady period " + strconv.FormatFloat(period, 'f', -1, 64)
	if over {
		row.Note += "; does not adapt to the budget"
	}
	return row, nil
}

// tesselRow runs the Tessel search on p.
func tesselRow(ctx context.Context, p *placement.Placement, opts compareOptions, bar *progress) (compareRow, error) {
	row := compareRow{Method: "Tessel", Placement: p.Name, MicroBatches: opts.MicroBatches}
	ctx, cancel := withLimit(ctx, opts.TimeLimit)
	defer cancel()
	t0 := time.Now()
	res, err := search.Run(ctx, p, search.Options{
		Memory: opts.Memory, MaxNR: opts.NR, MicroBatches: opts.MicroBatches,
		Method: repetend.MethodJoint, Jobs: opts.Jobs, Seed: opts.Seed,
		Offload: opts.Decisions.Offload, Recompute: opts.Decisions.Recompute,
		Progress: func(pr search.Progress) { bar.show("compare: Tessel %s", searchStatus(pr, time.Since(t0))) },
	})
	if errors.Is(err, search.ErrNoRepetend) {
		row.Status, row.Note = statusNone, "no repetend fits the memory budget"
		return row, nil
	}
	if err != nil {
		return row, fmt.Errorf("compare: Tessel search: %w", err)
	}
	s := res.Schedule
	if err := schedule.Verify(s); err != nil {
		return row, fmt.Errorf("compare: the Tessel schedule fails verification (a bug): %w", err)
	}
	row.fill(s, p, opts.Memory)
	recordCluster(s, opts.cluster, opts.given)
	if opts.Decisions.Any() {
		off, rec := s.Count()
		row.Offloaded, row.Recomputed = &off, &rec
	}
	r := res.Repetend
	if r != nil {
		row.RepetendBubbleRate = ptr(round6(schedule.RepetendBubbleRate(p, r.Period)))
		row.Note = fmt.Sprintf("N_R %d, period %d", r.NR, r.Period)
	}
	if res.Source != "repetend" {
		row.Note += "; schedule from " + res.Source
	} else if res.Fallback {
		row.Note += "; N < N_R: time-optimal schedule of all N"
	}
	if !res.Proven() {
		row.Note += fmt.Sprintf("; not proven (gap %d)", res.Gap())
	}
	if opts.Decisions.Any() {
		row.Note += fmt.Sprintf("; %d offloaded, %d recomputed", *row.Offloaded, *row.Recomputed)
	}
	row.Proven = ptr(res.Proven())
	row.Seconds = ptr(secs(res.Times.Total))
	return row, nil
}

// optimalRow runs the time-optimal search of a few micro-batches.
func optimalRow(ctx context.Context, p *placement.Placement, opts compareOptions, bar *progress) (compareRow, error) {
	row := compareRow{Method: "time-optimal", Placement: p.Name, MicroBatches: opts.OptimalN}
	ctx, cancel := withLimit(ctx, opts.OptimalLimit)
	defer cancel()
	t0 := time.Now()
	s, sol, err := smt.Optimal(ctx, p, opts.OptimalN, opts.Memory, smt.Options{
		Seed: opts.Seed,
		Progress: func(lo, hi int) {
			bar.show("compare: time-optimal search, makespan between %d and %d", lo, hi)
		},
	})
	elapsed := time.Since(t0)
	switch {
	case errors.Is(err, smt.ErrInfeasible):
		row.Status, row.Note = statusNone, "no schedule fits the memory budget"
		return row, nil
	case errors.Is(err, smt.ErrInterrupted) || errors.Is(err, context.DeadlineExceeded):
		row.Status, row.Note = statusNone, "no schedule within the time limit"
		row.Seconds = ptr(secs(elapsed))
		return row, nil
	case err != nil:
		return row, fmt.Errorf("compare: time-optimal search: %w", err)
	}
	if err := schedule.Verify(s); err != nil {
		return row, fmt.Errorf("compare: the time-optimal schedule fails verification (a bug): %w", err)
	}
	row.fill(s, p, opts.Memory)
	recordCluster(s, opts.cluster, opts.given)
	row.Proven = ptr(sol.Proven)
	row.Seconds = ptr(secs(elapsed))
	row.Note = fmt.Sprintf("only N = %d", opts.OptimalN)
	if !sol.Proven {
		row.Note += fmt.Sprintf("; time limit: optimum between %d and %d", sol.LowerBound, sol.Makespan)
	}
	return row, nil
}

// fill records what a verified schedule achieves.
// fill measures s; the budget respected is every device's on p (a
// baseline over the budget is verified without one).
func (r *compareRow) fill(s *schedule.Schedule, p *placement.Placement, memory int) {
	r.schedule = s
	m := schedule.Measure(s)
	r.Status = statusOK
	r.Makespan = ptr(m.Makespan)
	r.BubbleRate = ptr(round6(m.BubbleRate))
	r.PeakMemory = m.PeakMemory
	ok := true
	for d, v := range m.PeakMemory {
		b := p.Budget(d, memory)
		ok = ok && (b <= 0 || v <= b)
	}
	r.BudgetRespected = ptr(ok)
}

func ptr[T any](v T) *T { return &v }

var compareHeader = []string{"method", "placement", "N", "repetend bubble rate", "makespan", "bubble rate", "peak memory", "budget respected", "search time", "note"}

func (c comparison) write(w io.Writer, format string) error {
	switch format {
	case "json":
		if c.fixedTimes {
			for i := range c.Rows {
				if c.Rows[i].Seconds != nil {
					c.Rows[i].Seconds = ptr(0.0)
				}
			}
		}
		return printJSON(w, c)
	case "csv":
		rows := [][]string{{"method", "placement", "micro_batches", "status", "repetend_bubble_rate", "makespan", "bubble_rate", "peak_memory", "budget_respected", "seconds", "proven", "note"}}
		for _, r := range c.Rows {
			peak := strings.Trim(ints(r.PeakMemory), "[]")
			secs := optFloat(r.Seconds, 6)
			if c.fixedTimes && r.Seconds != nil {
				secs = timePlaceholder
			}
			rows = append(rows, []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), r.Status,
				optFloat(r.RepetendBubbleRate, 6), optInt(r.Makespan), optFloat(r.BubbleRate, 6), peak,
				optBool(r.BudgetRespected), secs, optBool(r.Proven), r.Note})
		}
		return writeCSV(w, rows)
	}
	var rows [][]string
	for _, r := range c.Rows {
		rows = append(rows, c.cells(r))
	}
	if format == "table" {
		fmt.Fprintf(w, "tessel compare: %s, %d devices, memory %s, %d micro-batches\n\n", c.Placement, c.Devices, budget(c.Memory), c.MicroBatches)
	}
	if err := writeTable(w, format, compareHeader, rows); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintln(w, "\nrepetend bubble rate: the bubble rate as N grows (Tessel: its repetend's; a baseline: its steady state, as in Table II).")
		fmt.Fprintln(w, "× = no straightforward adaptation of the baseline to the placement. Every schedule shown passed the verifier.")
	}
	return nil
}

// cells is a row as people read it.
func (c comparison) cells(r compareRow) []string {
	if r.Status == statusNotApplicable {
		return []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), "×", "×", "×", "×", "×", "-", r.Note}
	}
	t := "-"
	if r.Seconds != nil {
		t = fmt.Sprintf("%.3fs", *r.Seconds)
		if c.fixedTimes {
			t = timePlaceholder
		}
	}
	if r.Status == statusNone {
		return []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), "none", "-", "-", "-", "-", t, r.Note}
	}
	rate := "-"
	if r.RepetendBubbleRate != nil {
		rate = pct(*r.RepetendBubbleRate)
	}
	budgetText := yesNo(*r.BudgetRespected)
	if r.Proven != nil && !*r.Proven {
		t += " (not proven)"
	}
	return []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), rate, strconv.Itoa(*r.Makespan), pct(*r.BubbleRate), ints(r.PeakMemory), budgetText, t, r.Note}
}

// writeTable renders a table for people: boxed (table) or a pipe table
// (markdown), cells left-aligned and headers as written.
func writeTable(w io.Writer, format string, header []string, rows [][]string) error {
	var r tw.Renderer = renderer.NewBlueprint()
	if format == "markdown" {
		r = renderer.NewMarkdown()
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(r),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

func writeCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

func optFloat(v *float64, digits int) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

func optInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

func optBool(v *bool) string {
	if v == nil {
		return ""
	}
	return strconv.FormatBool(*v)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// paperTableII is the paper's Table II (§VI-B): the bubble rate of each
// training schedule as the number of micro-batches grows, on 4 devices.
// NR and Memory are the settings of our Tessel search for each model.
var paperTableII = []struct {
	Model, Placement string
	NR, Memory       int
	Paper            [4]string // 1F1B, Chimera-direct, 1F1B+, Tessel
}{
	{"GPT", "m-shape", 6, 6, [4]string{"0%", "20%", "25%", "0%"}},
	{"mT5", "nn-shape", 6, 6, [4]string{"0%", "20%", "20%", "0%"}},
	{"Flava", "k-shape", 3, 6, [4]string{"0%", "20%", "×", "0%"}},
}

// tableIIMethods are Table II's columns: a baseline name and the
// placement it runs on ("" = the model's own), or "tessel".
var tableIIMethods = []struct{ Name, Title, Placement string }{
	{"1f1b", "1F1B", "v-shape"},
	{"chimera-direct", "Chimera-direct", "x-shape"},
	{"1f1b-plus", "1F1B+", ""},
	{"tessel", "Tessel", ""},
}

// tableIICell is one method on one model; it is also the JSON form.
type tableIICell struct {
	Method     string   `json:"method"`
	Placement  string   `json:"placement"`
	BubbleRate *float64 `json:"bubble_rate"` // null: ×
	Paper      string   `json:"paper"`
	Note       string   `json:"note,omitempty"`
}

type tableIIRow struct {
	Model     string        `json:"model"`
	Placement string        `json:"placement"`
	Cells     []tableIICell `json:"cells"`
}

type tableII struct {
	Devices int          `json:"devices"`
	Rows    []tableIIRow `json:"rows"`
}

// runTableII measures Table II: the baselines' steady-state bubble rates
// and the bubble rate of Tessel's repetend, found with the settings of
// paperTableII and checked to have a warmup and a cooldown.
func runTableII(ctx context.Context, opts compareOptions, stdout, stderr io.Writer) error {
	if opts.Placement.File != "" {
		return usageErrorf("compare: --table-ii uses the built-in placements; drop --placement-file")
	}
	bar := newProgress(stderr)
	defer bar.done()
	load := func(name string) (*placement.Placement, error) {
		spec := opts.Placement
		spec.Name = name
		return spec.load()
	}
	out := tableII{Devices: opts.Placement.Devices}
	for _, model := range paperTableII {
		p, err := load(model.Placement)
		if err != nil {
			return err
		}
		row := tableIIRow{Model: model.Model, Placement: model.Placement}
		for k, m := range tableIIMethods {
			on := p
			if m.Placement != "" {
				if on, err = load(m.Placement); err != nil {
					return err
				}
			}
			cell := tableIICell{Method: m.Title, Placement: on.Name, Paper: model.Paper[k]}
			bar.show("compare: Table II, %s, %s", model.Model, m.Title)
			if m.Name == "tessel" {
				r, err := tesselRepetend(ctx, on, model.Memory, model.NR, opts.Seed)
				if err != nil {
					return err
				}
				if r != nil {
					cell.BubbleRate = ptr(round6(schedule.RepetendBubbleRate(on, r.Period)))
					cell.Note = fmt.Sprintf("memory %d, N_R %d, period %d", model.Memory, r.NR, r.Period)
				} else {
					cell.Note = fmt.Sprintf("no repetend with memory %d, N_R ≤ %d", model.Memory, model.NR)
				}
			} else {
				bm, ok := baseline.Lookup(m.Name)
				if !ok {
					return fmt.Errorf("compare: no baseline %q", m.Name)
				}
				rate, period, err := baseline.SteadyBubbleRate(bm, on)
				switch {
				case errors.Is(err, baseline.ErrNotApplicable):
					cell.Note = "not applicable"
				case err != nil:
					return fmt.Errorf("compare: %w", err)
				default:
					cell.BubbleRate = ptr(round6(rate))
					cell.Note = "steady period " + strconv.FormatFloat(period, 'f', -1, 64)
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		out.Rows = append(out.Rows, row)
	}
	bar.done()
	return out.write(stdout, opts.Format)
}

// tesselRepetend is the repetend of least period under the budget whose
// warmup and cooldown exist (nil when there is none).
func tesselRepetend(ctx context.Context, p *placement.Placement, memory, nr, seed int) (*repetend.Repetend, error) {
	res, err := repetend.Search(ctx, p, repetend.Options{
		Memory: memory, MaxNR: nr, Method: repetend.MethodJoint, Seed: seed,
		Accept: func(ctx context.Context, nr int, offs []int) (bool, error) {
			return search.Feasible(ctx, p, nr, offs, memory, steadyMicroBatches)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("compare: %s: repetend search: %w", p.Name, err)
	}
	return res.Best, nil
}

func (t tableII) write(w io.Writer, format string) error {
	switch format {
	case "json":
		return printJSON(w, t)
	case "csv":
		rows := [][]string{{"model", "placement", "method", "method_placement", "bubble_rate", "paper", "note"}}
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				rows = append(rows, []string{r.Model, r.Placement, c.Method, c.Placement, optFloat(c.BubbleRate, 6), c.Paper, c.Note})
			}
		}
		return writeCSV(w, rows)
	}
	header := []string{"model"}
	for _, m := range tableIIMethods {
		title := m.Title
		if m.Placement != "" {
			title += " (" + m.Placement + ")"
		}
		header = append(header, title)
	}
	var rows [][]string
	for _, r := range t.Rows {
		line := []string{r.Model + " (" + r.Placement + ")"}
		for _, c := range r.Cells {
			ours := "×"
			if c.BubbleRate != nil {
				ours = pct(*c.BubbleRate)
			}
			line = append(line, ours+" (paper "+c.Paper+")")
		}
		rows = append(rows, line)
	}
	if format == "table" {
		fmt.Fprintf(w, "Table II: bubble rate as the number of micro-batches grows, %d devices (ours, the paper's in brackets)\n\n", t.Devices)
	}
	if err := writeTable(w, format, header, rows); err != nil {
		return err
	}
	if format == "table" {
		var settings []string
		for _, m := range paperTableII {
			settings = append(settings, fmt.Sprintf("%s memory %d, N_R ≤ %d", m.Placement, m.Memory, m.NR))
		}
		fmt.Fprintf(w, "\nTessel: the repetend of least period whose warmup and cooldown exist (%s).\n", strings.Join(settings, "; "))
		fmt.Fprintln(w, "Baselines: steady state of the schedule as N grows, unlimited memory. × = no straightforward adaptation.")
	}
	return nil
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
