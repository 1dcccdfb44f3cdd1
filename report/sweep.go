package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/chart"
	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/internal/textfmt"
)

// File is one file of tessel sweep --out-dir: its name and its content.
type File struct {
	Name string
	Data []byte
}

// SweepFileNames are the names of the files SweepFiles writes for format: the
// table and the chart of Fig. 11, then of Fig. 12.
func SweepFileNames(format string) []string {
	ext := textfmt.Ext(format)
	return []string{"fig11." + ext, "fig11.svg", "fig12." + ext, "fig12.svg"}
}

// SweepFiles are the sweep's tables in format and its SVG line charts, one
// pair per figure (SweepFileNames), as tessel sweep --out-dir writes them.
func SweepFiles(o *compare.SweepResult, format string) ([]File, error) {
	var files []File
	for _, f := range []*compare.Figure{&o.Fig11, &o.Fig12} {
		var table, svg bytes.Buffer
		if err := WriteFigure(&table, f, format, format == "json"); err != nil {
			return nil, err
		}
		if err := FigureChart(f).WriteSVG(&svg); err != nil {
			return nil, err
		}
		files = append(files, File{"fig" + f.Figure + "." + textfmt.Ext(format), table.Bytes()}, File{"fig" + f.Figure + ".svg", svg.Bytes()})
	}
	return files, nil
}

// LatencyFiles are the latency sweep's table in format, its throughput chart
// and, where it has one, its latency chart, as tessel sweep --latency
// --out-dir writes them.
func LatencyFiles(r *compare.LatencyResult, format string) ([]File, error) {
	var table, svg bytes.Buffer
	if err := WriteLatencySweep(&table, r, format); err != nil {
		return nil, err
	}
	if err := LatencySweepChart(r).WriteSVG(&svg); err != nil {
		return nil, err
	}
	files := []File{{"latency." + textfmt.Ext(format), table.Bytes()}, {"latency.svg", svg.Bytes()}}
	if lc := LatencyMaxChart(r); lc != nil {
		var b bytes.Buffer
		if err := lc.WriteSVG(&b); err != nil {
			return nil, err
		}
		files = append(files, File{"latency-max.svg", b.Bytes()})
	}
	return files, nil
}

// WriteTableII writes the paper's Table II as tessel compare --table2
// prints it, in a format: "table", "markdown", "csv" or "json".
func WriteTableII(w io.Writer, t *compare.TableIIResult, format string) error {
	switch format {
	case "json":
		return textfmt.JSON(w, t)
	case "csv":
		rows := [][]string{{"model", "placement", "method", "method_placement", "bubble_rate", "paper", "note"}}
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				rows = append(rows, []string{r.Model, r.Placement, c.Method, c.Placement, textfmt.OptFloat(c.BubbleRate, 6), c.Paper, c.Note})
			}
		}
		return textfmt.CSV(w, rows)
	}
	header := []string{"model"}
	for _, m := range compare.TableIIMethods() {
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
				ours = textfmt.Pct(*c.BubbleRate)
			}
			line = append(line, ours+" (paper "+c.Paper+")")
		}
		rows = append(rows, line)
	}
	if format == "table" {
		fmt.Fprintf(w, "Table II: bubble rate as the number of micro-batches grows, %d devices (ours, the paper's in brackets)\n\n", t.Devices)
	}
	if err := textfmt.Table(w, format, header, rows); err != nil {
		return err
	}
	if format == "table" {
		var settings []string
		for _, m := range compare.PaperTableII() {
			settings = append(settings, fmt.Sprintf("%s memory %d, N_R ≤ %d", m.Placement, m.Memory, m.NR))
		}
		fmt.Fprintf(w, "\nTessel: the repetend of least period whose warmup and cooldown exist (%s).\n", strings.Join(settings, "; "))
		fmt.Fprintln(w, "Baselines: steady state of the schedule as N grows, unlimited memory. × = no straightforward adaptation.")
	}
	return nil
}

// WriteLatencySweep writes the latency sweep as tessel sweep --latency
// prints it: "table" (with a title and a legend),
// "markdown", "csv" or "json". A row per point: method, N, budget,
// makespan, throughput, max and mean latency, and whether the point
// meets the largest budget asked (every Tessel point meets its own).
func WriteLatencySweep(w io.Writer, r *compare.LatencyResult, format string) error {
	if format == "json" {
		return textfmt.JSON(w, r)
	}
	limit := 0
	for _, b := range r.Budgets {
		limit = max(limit, b)
	}
	within := func(pt compare.LatencyPoint) string {
		switch {
		case pt.Budget > 0:
			return "yes"
		case limit == 0:
			return "-"
		}
		return textfmt.YesNo(pt.MaxLatency <= limit)
	}
	proven := func(pt compare.LatencyPoint) string {
		if pt.Proven == nil {
			return "-"
		}
		return textfmt.YesNo(*pt.Proven)
	}
	budget := func(pt compare.LatencyPoint) string {
		if pt.Budget > 0 {
			return strconv.Itoa(pt.Budget)
		}
		return "-"
	}
	if format == "csv" {
		rows := [][]string{{"method", "placement", "micro_batches", "budget", "makespan", "throughput", "max_latency", "mean_latency", "within_budget", "proven"}}
		for _, pt := range r.Points {
			rows = append(rows, []string{pt.Method, pt.Placement, strconv.Itoa(pt.MicroBatches), budget(pt), strconv.Itoa(pt.Makespan),
				strconv.FormatFloat(pt.Throughput, 'f', -1, 64), strconv.Itoa(pt.MaxLatency), strconv.FormatFloat(pt.MeanLatency, 'f', -1, 64), within(pt), proven(pt)})
		}
		return textfmt.CSV(w, rows)
	}
	header := []string{"method", "placement", "N", "latency budget", "makespan", "throughput", "max latency", "mean latency", "within budget", "proven"}
	var rows [][]string
	for _, pt := range r.Points {
		rows = append(rows, []string{pt.Method, pt.Placement, strconv.Itoa(pt.MicroBatches), budget(pt), strconv.Itoa(pt.Makespan),
			strconv.FormatFloat(pt.Throughput, 'f', 6, 64), strconv.Itoa(pt.MaxLatency), strconv.FormatFloat(pt.MeanLatency, 'f', -1, 64), within(pt), proven(pt)})
	}
	if format == "table" {
		fmt.Fprintf(w, "%s\n\n", latencyTitle(r))
	}
	if err := textfmt.Table(w, format, header, rows); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintln(w, "\nthroughput: N / makespan, requests per time unit. latency: a request's first block's start to its last block's end.")
		fmt.Fprintf(w, "TP: every block on all %d devices (efficiency %g per doubling); 1F1B: the blocks as a chain of stages; GPipe: on the placement.\n", r.Devices, r.Efficiency)
		fmt.Fprintln(w, "Tessel meets its latency budget; a baseline is within budget when it meets the largest one. proven: Tessel's makespan is optimal")
		fmt.Fprintln(w, "under the budget (the lower bound, or the time-optimal search of all N under it). Every schedule passed the verifier.")
	}
	return nil
}

func latencyTitle(r *compare.LatencyResult) string {
	return fmt.Sprintf("tessel sweep --latency: %s, %d devices", r.Placement, r.Devices)
}

// LatencySweepChart draws the sweep. With several budgets: throughput against the
// latency budget, one line of Tessel per N, each baseline a point at its
// largest latency (the trade-off). With one budget: throughput against
// N, one line per method (the Tessel paper's Fig. 15).
func LatencySweepChart(r *compare.LatencyResult) *chart.Line {
	c := &chart.Line{Title: latencyTitle(r), YLabel: "throughput (requests per time unit)"}
	series := map[string]*chart.Series{}
	var order []string
	add := func(name string, x, y float64) {
		s, ok := series[name]
		if !ok {
			s = &chart.Series{Name: name}
			series[name] = s
			order = append(order, name)
		}
		s.Points = append(s.Points, chart.Point{X: x, Y: y})
	}
	if len(r.Budgets) > 1 {
		c.XLabel = "latency (Tessel: its budget; a baseline: its largest)"
		for _, pt := range r.Points {
			name := fmt.Sprintf("%s, N=%d", pt.Method, pt.MicroBatches)
			x := float64(pt.MaxLatency)
			if pt.Budget > 0 {
				x = float64(pt.Budget)
			}
			add(name, x, pt.Throughput)
		}
	} else {
		c.XLabel = "N (requests)"
		c.IntegerX = true
		for _, pt := range r.Points {
			add(pt.Method, float64(pt.MicroBatches), pt.Throughput)
		}
	}
	for _, name := range order {
		c.Series = append(c.Series, *series[name])
	}
	return c
}

// LatencyMaxChart draws each method's largest latency against N, the
// budget as a line of its own (one budget; the other half of the Tessel
// paper's Fig. 15). nil with several budgets.
func LatencyMaxChart(r *compare.LatencyResult) *chart.Line {
	if len(r.Budgets) > 1 {
		return nil
	}
	c := &chart.Line{Title: latencyTitle(r), XLabel: "N (requests)", YLabel: "largest latency of a request", IntegerX: true}
	series := map[string]*chart.Series{}
	var order []string
	for _, pt := range r.Points {
		s, ok := series[pt.Method]
		if !ok {
			s = &chart.Series{Name: pt.Method}
			series[pt.Method] = s
			order = append(order, pt.Method)
		}
		s.Points = append(s.Points, chart.Point{X: float64(pt.MicroBatches), Y: float64(pt.MaxLatency)})
	}
	for _, name := range order {
		c.Series = append(c.Series, *series[name])
	}
	if len(r.Budgets) == 1 && r.Budgets[0] > 0 {
		b := chart.Series{Name: fmt.Sprintf("budget %d", r.Budgets[0])}
		for _, n := range r.MicroBatches {
			b.Points = append(b.Points, chart.Point{X: float64(n), Y: float64(r.Budgets[0])})
		}
		c.Series = append(c.Series, b)
	}
	return c
}

// WriteSweep writes both figures of tessel sweep in a format: "table",
// "markdown", "csv" (one header) or "json".
func WriteSweep(w io.Writer, o *compare.SweepResult, format string) error {
	if format == "json" {
		return textfmt.JSON(w, o)
	}
	if err := WriteFigure(w, &o.Fig11, format, false); err != nil {
		return err
	}
	if format != "csv" {
		fmt.Fprintln(w)
	}
	return WriteFigure(w, &o.Fig12, format, format == "csv")
}

// WriteFigure prints one figure's grid: a table with a row per placement and a
// column per x, or CSV rows (header unless noHeader), or JSON.
func WriteFigure(w io.Writer, f *compare.Figure, format string, noHeader bool) error {
	switch format {
	case "json":
		return textfmt.JSON(w, f)
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
			rows = append(rows, []string{f.Figure, pt.Placement, nr, mem, textfmt.OptFloat(pt.BubbleRate, 6), textfmt.OptInt(nonzero(pt.Period)), textfmt.OptInt(nonzero(pt.NR)), strconv.FormatBool(pt.Proven)})
		}
		return textfmt.CSV(w, rows)
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
	for k, name := range f.Placements() {
		row := []string{name}
		if f.X == "memory" {
			row = append(row, strconv.Itoa(f.NR[name]))
		}
		for _, pt := range f.Points[k*len(f.Xs) : (k+1)*len(f.Xs)] {
			cell := "none"
			if pt.BubbleRate != nil {
				cell = textfmt.Pct(*pt.BubbleRate)
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
		fmt.Fprintln(w, figureTitle(f))
		fmt.Fprintln(w)
	}
	if err := textfmt.Table(w, format, header, rows); err != nil {
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

func figureTitle(f *compare.Figure) string {
	if f.X == "memory" {
		return fmt.Sprintf("Fig. 12: repetend bubble rate against the memory budget M, N_R fixed, %d devices%s", f.Devices(), figureLatencyText(f))
	}
	return fmt.Sprintf("Fig. 11: repetend bubble rate against N_R, memory unlimited, %d devices%s", f.Devices(), figureLatencyText(f))
}

// latencyText is ", latency budget L" under a budget, else "".
func figureLatencyText(f *compare.Figure) string {
	if f.LatencyBudget <= 0 {
		return ""
	}
	return fmt.Sprintf(", latency budget %d", f.LatencyBudget)
}

// FigureChart draws the figure: one line per placement, rates in percent.
func FigureChart(f *compare.Figure) *chart.Line {
	c := &chart.Line{Title: fmt.Sprintf("Fig. 11: bubble rate against N_R (memory unlimited, %d devices%s)", f.Devices(), figureLatencyText(f)), YLabel: "bubble rate", YSuffix: "%", IntegerX: true, XLabel: "N_R (most micro-batches in the repetend)"}
	if f.X == "memory" {
		c.XLabel = "memory budget M (per device)"
		c.Title = fmt.Sprintf("Fig. 12: bubble rate against the memory budget (N_R fixed, %d devices%s)", f.Devices(), figureLatencyText(f))
	}
	for k, name := range f.Placements() {
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

func nonzero(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}
