package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/chart"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
)

type sweepOptions struct {
	Placements   []string // built-in names
	Devices      int
	ForwardTime  int
	BackwardTime int
	NR           string // range of N_R of Fig. 11, "1-8"
	Memory       string // range of memory budgets of Fig. 12, "2-8"
	Fig12NR      int    // N_R of Fig. 12; 0: where Fig. 11 first reaches its least rate
	Jobs         int
	Seed         int
	TimeLimit    time.Duration // per point
	Format       string
	OutDir       string
	Force        bool
	Cluster      clusterSpec // every placement on it (its device count must be --devices)
	Decisions    placement.Decisions
}

const defaultSweepPlacements = "v-shape,x-shape,m-shape,nn-shape,k-shape"

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:  "sweep",
		Usage: "bubble rate against N_R and against the memory budget, per placement (the paper's Fig. 11 and 12)",
		UsageText: "tessel sweep [--placement v-shape,x-shape,m-shape,nn-shape,k-shape] [--nr 1-8] [--memory 2-8] [--format table|csv|json|markdown]\n" +
			"   tessel sweep --out-dir docs/img   (fig11.svg, fig12.svg and the tables)",
		Description: "Fig. 11: for every N_R in --nr, the repetend bubble rate of the best repetend with at most\n" +
			"N_R micro-batches, memory unlimited.\n" +
			"Fig. 12: for every budget M in --memory, the same with N_R fixed (--fig12-nr, or per placement\n" +
			"the smallest N_R at which Fig. 11 reaches its least rate) and memory at most M.\n" +
			"Every point is a repetend of least period whose warmup and cooldown exist under the budget;\n" +
			"\"none\" means no repetend fits. A point stopped by --time-limit is marked *: its rate is an upper\n" +
			"bound, the better of what it found and of the point before it (whose repetend fits it too).\n" +
			"With --out-dir the tables and SVG line charts (one line per placement) go to files.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "placement", Aliases: []string{"p"}, Usage: "comma-separated built-in placements", Value: defaultSweepPlacements},
			&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "number of devices D", Value: 4},
			&cli.IntFlag{Name: "forward-time", Usage: "time of a forward block", Value: 1},
			&cli.IntFlag{Name: "backward-time", Usage: "time of a backward block", Value: 3},
			&cli.StringFlag{Name: "nr", Usage: "range of N_R of Fig. 11 (`A-B`, or one number)", Value: "1-8"},
			&cli.StringFlag{Name: "memory", Aliases: []string{"m"}, Usage: "range of memory budgets of Fig. 12 (`A-B`, or one number)", Value: "2-8"},
			&cli.IntFlag{Name: "fig12-nr", Usage: "N_R of Fig. 12 for every placement (0: where Fig. 11 reaches its least rate)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "points searched at once (0: one per core)"},
			clusterFlags()[0], clusterFlags()[1], clusterFlags()[2], clusterFlags()[3],
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.DurationFlag{Name: "time-limit", Usage: "time limit of each point (0: none); a few points at tight budgets take many minutes", Value: 2 * time.Minute},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "table format: " + strings.Join(tableFormats, ", "), Value: "table"},
			&cli.StringFlag{Name: "out-dir", Usage: "write fig11.svg, fig12.svg and the tables into `DIR`"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite files in --out-dir"},
			savingsFlags()[0], savingsFlags()[1], savingsFlags()[2],
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("sweep: unexpected argument %q", c.Args().First())
			}
			return runSweep(c.Context, sweepOptions{
				Placements: splitList(c.String("placement")), Devices: c.Int("devices"),
				ForwardTime: c.Int("forward-time"), BackwardTime: c.Int("backward-time"),
				NR: c.String("nr"), Memory: c.String("memory"), Fig12NR: c.Int("fig12-nr"),
				Jobs: c.Int("jobs"), Seed: c.Int("seed"), TimeLimit: c.Duration("time-limit"),
				Format: c.String("format"), OutDir: c.String("out-dir"), Force: c.Bool("force"),
				Cluster: clusterSpecFrom(c), Decisions: savingsFrom(c),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// sweepPoint is one searched point; it is also the JSON and CSV form.
type sweepPoint struct {
	Placement string `json:"placement"`
	X         int    `json:"x"` // N_R (Fig. 11) or memory budget (Fig. 12)
	// BubbleRate is the repetend bubble rate; nil when no repetend fits.
	BubbleRate *float64 `json:"bubble_rate"`
	Period     int      `json:"period,omitempty"`
	NR         int      `json:"nr,omitempty"` // N_R of the repetend found
	Proven     bool     `json:"proven"`
	// Decisions: the point is a construction's steady state that
	// offloads or recomputes (--offload, --recompute).
	Decisions bool `json:"decisions,omitempty"`
}

// sweepFigure is the grid behind one figure.
type sweepFigure struct {
	Figure string         `json:"figure"` // "11" or "12"
	X      string         `json:"x"`      // "nr" or "memory"
	Memory int            `json:"memory"` // Fig. 11: 0 (unlimited)
	NR     map[string]int `json:"nr,omitempty"`
	Xs     []int          `json:"xs"`
	Points []sweepPoint   `json:"points"` // by placement, then x
	// placements in the order asked, for tables and charts.
	placements []string
	devices    int
}

type sweepOutput struct {
	Devices int         `json:"devices"`
	Fig11   sweepFigure `json:"fig11"`
	Fig12   sweepFigure `json:"fig12"`
}

func runSweep(ctx context.Context, opts sweepOptions, stdout, stderr io.Writer) error {
	if !contains(tableFormats, opts.Format) {
		return usageErrorf("sweep: unknown --format %q (want %s)", opts.Format, strings.Join(tableFormats, ", "))
	}
	nrs, err := parseRange("nr", opts.NR, 1)
	if err != nil {
		return err
	}
	mems, err := parseRange("memory", opts.Memory, 1)
	if err != nil {
		return err
	}
	if err := checkAtLeast("fig12-nr", opts.Fig12NR, 0); err != nil {
		return err
	}
	if err := checkAtLeast("jobs", opts.Jobs, 0); err != nil {
		return err
	}
	if len(opts.Placements) == 0 {
		return usageErrorf("sweep: --placement names no placement")
	}
	var ps []*placement.Placement
	for _, name := range opts.Placements {
		spec := placementSpec{Name: name, Devices: opts.Devices, ForwardTime: opts.ForwardTime, BackwardTime: opts.BackwardTime, Cluster: opts.Cluster}
		p, err := spec.load()
		if err != nil {
			return err
		}
		if opts.Decisions != (placement.Decisions{}) {
			if p, _, err = spec.loadDeclared(opts.Decisions); err != nil {
				return err
			}
		}
		ps = append(ps, p)
	}
	files := sweepFiles(opts.Format)
	if opts.OutDir != "" && !opts.Force {
		for _, f := range files {
			path := filepath.Join(opts.OutDir, f)
			if _, err := os.Stat(path); err == nil {
				return usageErrorf("%s exists (use --force to overwrite it)", path)
			}
		}
	}

	bar := newProgress(stderr)
	defer bar.done()
	jobs := opts.Jobs
	if jobs == 0 {
		jobs = runtime.NumCPU()
	}
	total := len(ps) * (len(nrs) + len(mems))
	var mu sync.Mutex
	done := 0
	search := func(ctx context.Context, p *placement.Placement, memory, nr int) (sweepPoint, error) {
		pt, err := sweepSearch(ctx, p, memory, nr, opts.Seed, opts.TimeLimit)
		mu.Lock()
		done++
		bar.show("sweep: %d of at most %d points", done, total)
		mu.Unlock()
		return pt, err
	}

	fig11 := sweepFigure{Figure: "11", X: "nr", Xs: nrs, placements: opts.Placements, devices: opts.Devices}
	fig11.Points, err = sweepGrid(ctx, ps, nrs, jobs, func(ctx context.Context, p *placement.Placement, nr int) (sweepPoint, error) {
		return search(ctx, p, 0, nr)
	})
	if err != nil {
		return err
	}
	fig12 := sweepFigure{Figure: "12", X: "memory", Xs: mems, NR: map[string]int{}, placements: opts.Placements, devices: opts.Devices}
	for k, p := range ps {
		nr := opts.Fig12NR
		if nr == 0 {
			nr = leastRateNR(fig11.Points[k*len(nrs) : (k+1)*len(nrs)])
		}
		fig12.NR[p.Name] = nr
	}
	fig12.Points, err = sweepGrid(ctx, ps, mems, jobs, func(ctx context.Context, p *placement.Placement, m int) (sweepPoint, error) {
		pt, err := search(ctx, p, m, fig12.NR[p.Name])
		if err != nil || !opts.Decisions.Any() {
			return pt, err
		}
		return withDecisions(ctx, pt, p, m, opts.Decisions)
	})
	if err != nil {
		return err
	}
	bar.done()

	out := sweepOutput{Devices: opts.Devices, Fig11: fig11, Fig12: fig12}
	if opts.OutDir == "" {
		return out.write(stdout, opts.Format)
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return usageErrorf("sweep: %v", err)
	}
	for _, f := range []*sweepFigure{&out.Fig11, &out.Fig12} {
		var table, svg bytes.Buffer
		if err := f.write(&table, opts.Format, opts.Format == "json"); err != nil {
			return err
		}
		if err := f.chart().WriteSVG(&svg); err != nil {
			return err
		}
		for _, file := range []struct {
			name string
			data []byte
		}{{"fig" + f.Figure + "." + formatExt(opts.Format), table.Bytes()}, {"fig" + f.Figure + ".svg", svg.Bytes()}} {
			path := filepath.Join(opts.OutDir, file.name)
			if err := writeNew(path, opts.Force, file.data); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s\n", path)
		}
	}
	return nil
}

// sweepSearch finds the repetend of least period with N_R ≤ nr under the
// budget whose warmup and cooldown exist.
func sweepSearch(ctx context.Context, p *placement.Placement, memory, nr, seed int, limit time.Duration) (sweepPoint, error) {
	ctx, cancel := withLimit(ctx, limit)
	defer cancel()
	res, err := repetend.Search(ctx, p, repetend.Options{
		Memory: memory, MaxNR: nr, Method: repetend.MethodJoint, Seed: seed, Jobs: 1,
		Accept: func(ctx context.Context, nr int, offs []int) (bool, error) {
			return search.Feasible(ctx, p, nr, offs, memory, steadyMicroBatches)
		},
	})
	pt := sweepPoint{Placement: p.Name}
	if err != nil {
		return pt, fmt.Errorf("sweep: %s, memory %s, N_R ≤ %d: %w", p.Name, budget(memory), nr, err)
	}
	pt.Proven = res.Proven
	if r := res.Best; r != nil {
		pt.BubbleRate = ptr(round6(schedule.RepetendBubbleRate(p, r.Period)))
		pt.Period, pt.NR = r.Period, r.NR
	}
	return pt, nil
}

// withDecisions improves a Fig. 12 point by the steady state of the
// constructions that offload or recompute (search.SteadyPeriod), when
// theirs is shorter than the repetend's; such a point is marked with the
// decisions and is not proven.
func withDecisions(ctx context.Context, pt sweepPoint, p *placement.Placement, memory int, o placement.Decisions) (sweepPoint, error) {
	period, ok, err := search.SteadyPeriod(ctx, p, steadyMicroBatches, memory, o.Offload, o.Recompute)
	if err != nil {
		return pt, fmt.Errorf("sweep: %s, memory %s: %w", p.Name, budget(memory), err)
	}
	if ok && (pt.BubbleRate == nil || period < pt.Period) {
		pt.BubbleRate = ptr(round6(schedule.RepetendBubbleRate(p, period)))
		pt.Period, pt.NR, pt.Proven, pt.Decisions = period, 0, false, true
	}
	return pt, nil
}

// sweepGrid searches every (placement, x) on jobs workers and returns the
// points by placement, then x, whatever order they finished in.
func sweepGrid(ctx context.Context, ps []*placement.Placement, xs []int, jobs int,
	point func(context.Context, *placement.Placement, int) (sweepPoint, error)) ([]sweepPoint, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]sweepPoint, len(ps)*len(xs))
	errs := make([]error, len(out))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(out)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				pt, err := point(ctx, ps[k/len(xs)], xs[k%len(xs)])
				pt.X = xs[k%len(xs)]
				out[k], errs[k] = pt, err
				if err != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for k := range out {
		select {
		case next <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	for k := range ps {
		carryForward(out[k*len(xs) : (k+1)*len(xs)])
	}
	return out, nil
}

// carryForward improves points stopped by the time limit with the point
// before them: x grows along one placement's points and every repetend
// found for a smaller N_R or budget also fits a larger one (with its
// warmup and cooldown), so its rate bounds the larger point's from above.
// The point stays marked as not proven.
func carryForward(pts []sweepPoint) {
	for k := 1; k < len(pts); k++ {
		prev, pt := pts[k-1], &pts[k]
		if pt.Proven || prev.BubbleRate == nil || (pt.BubbleRate != nil && *pt.BubbleRate <= *prev.BubbleRate) {
			continue
		}
		pt.BubbleRate, pt.Period, pt.NR, pt.Decisions = prev.BubbleRate, prev.Period, prev.NR, prev.Decisions
	}
}

// leastRateNR is the smallest N_R of one placement's Fig. 11 points at
// which the bubble rate reaches its least value (the last point if none
// has a repetend).
func leastRateNR(pts []sweepPoint) int {
	best := -1
	for k, pt := range pts {
		if pt.BubbleRate != nil && (best < 0 || *pt.BubbleRate < *pts[best].BubbleRate) {
			best = k
		}
	}
	if best < 0 {
		return pts[len(pts)-1].X
	}
	return pts[best].X
}

func (o sweepOutput) write(w io.Writer, format string) error {
	if format == "json" {
		return printJSON(w, o)
	}
	if err := o.Fig11.write(w, format, false); err != nil {
		return err
	}
	if format != "csv" {
		fmt.Fprintln(w)
	}
	return o.Fig12.write(w, format, format == "csv")
}

// write prints one figure's grid: a table with a row per placement and a
// column per x, or CSV rows (header unless skipped), or JSON.
func (f *sweepFigure) write(w io.Writer, format string, noHeader bool) error {
	switch format {
	case "json":
		return printJSON(w, f)
	case "csv":
		var rows [][]string
		if !noHeader {
			rows = append(rows, []string{"figure", "placement", "nr", "memory", "bubble_rate", "period", "repetend_nr", "proven"})
		}
		for _, pt := range f.Points {
			nr, mem := strconv.Itoa(pt.X), "0"
			if f.X == "memory" {
				nr, mem = strconv.Itoa(f.NR[pt.Placement]), strconv.Itoa(pt.X)
			}
			rows = append(rows, []string{f.Figure, pt.Placement, nr, mem, optFloat(pt.BubbleRate, 6), optInt(nonzero(pt.Period)), optInt(nonzero(pt.NR)), strconv.FormatBool(pt.Proven)})
		}
		return writeCSV(w, rows)
	}
	header := []string{"placement"}
	if f.X == "memory" {
		header = append(header, "N_R")
	}
	for _, x := range f.Xs {
		if f.X == "memory" {
			header = append(header, "M="+strconv.Itoa(x))
		} else {
			header = append(header, "N_R≤"+strconv.Itoa(x))
		}
	}
	var rows [][]string
	stopped, decided := false, false
	for k, name := range f.placements {
		row := []string{name}
		if f.X == "memory" {
			row = append(row, strconv.Itoa(f.NR[name]))
		}
		for _, pt := range f.Points[k*len(f.Xs) : (k+1)*len(f.Xs)] {
			cell := "none"
			if pt.BubbleRate != nil {
				cell = pct(*pt.BubbleRate)
			}
			switch {
			case pt.Decisions:
				cell += "†"
				decided = true
			case !pt.Proven:
				cell += "*"
				stopped = true
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	if format == "table" {
		fmt.Fprintln(w, f.title())
		fmt.Fprintln(w)
	}
	if err := writeTable(w, format, header, rows); err != nil {
		return err
	}
	if stopped && format == "table" {
		fmt.Fprintln(w, "\n* stopped by the time limit: an upper bound, the better of what the search found and of the point to its left")
	}
	if decided && format == "table" {
		fmt.Fprintln(w, "\n† the steady state of a construction that offloads or recomputes activations (--offload, --recompute), not proven")
	}
	return nil
}

func (f *sweepFigure) title() string {
	if f.X == "memory" {
		return fmt.Sprintf("Fig. 12: repetend bubble rate against the memory budget M, N_R fixed, %d devices", f.devices)
	}
	return fmt.Sprintf("Fig. 11: repetend bubble rate against N_R, memory unlimited, %d devices", f.devices)
}

// chart draws the figure: one line per placement, rates in percent.
func (f *sweepFigure) chart() *chart.Line {
	c := &chart.Line{Title: fmt.Sprintf("Fig. 11: bubble rate against N_R (memory unlimited, %d devices)", f.devices), YLabel: "bubble rate", YSuffix: "%", IntegerX: true, XLabel: "N_R (most micro-batches in the repetend)"}
	if f.X == "memory" {
		c.XLabel = "memory budget M (per device)"
		c.Title = fmt.Sprintf("Fig. 12: bubble rate against the memory budget (N_R fixed, %d devices)", f.devices)
	}
	for k, name := range f.placements {
		s := chart.Series{Name: name}
		if f.X == "memory" {
			s.Name = fmt.Sprintf("%s (N_R %d)", name, f.NR[name])
		}
		for _, pt := range f.Points[k*len(f.Xs) : (k+1)*len(f.Xs)] {
			y := math.NaN()
			if pt.BubbleRate != nil {
				y = 100 * *pt.BubbleRate
			}
			s.Points = append(s.Points, chart.Point{X: float64(pt.X), Y: y})
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// sweepFiles are the files --out-dir receives.
func sweepFiles(format string) []string {
	ext := formatExt(format)
	return []string{"fig11." + ext, "fig11.svg", "fig12." + ext, "fig12.svg"}
}

func formatExt(format string) string {
	switch format {
	case "markdown":
		return "md"
	case "table":
		return "txt"
	}
	return format
}

func nonzero(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}

// parseRange reads "A-B" or "A" into A..B; every value must be ≥ min.
func parseRange(flag, s string, min int) ([]int, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	if !isRange {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return nil, usageErrorf("--%s: want a number or a range A-B, got %q", flag, s)
	}
	if a < min || b < a {
		return nil, usageErrorf("--%s: want %d ≤ A ≤ B, got %q", flag, min, s)
	}
	if b-a >= 64 {
		return nil, usageErrorf("--%s: %q has more than 64 values", flag, s)
	}
	xs := make([]int, 0, b-a+1)
	for x := a; x <= b; x++ {
		xs = append(xs, x)
	}
	return xs, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// steadyMicroBatches is the N for which sweep and Table II check that a
// repetend's warmup and cooldown exist: the rates they report hold as N
// grows, and N matters to the cooldown only where a micro-batch leaves
// memory behind (never on the built-in placements).
const steadyMicroBatches = 128
