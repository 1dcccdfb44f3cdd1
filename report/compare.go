package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/schedule"
)

// CompareHeader is tessel compare's table header.
func CompareHeader() []string {
	return []string{"method", "placement", "N", "repetend bubble rate", "makespan", "bubble rate", "peak memory", "budget respected", "search time", "note"}
}

// WriteComparison writes c as tessel compare prints it, in a format:
// "table" (for people, with a title and a legend), "markdown", "csv" or
// "json".
func WriteComparison(w io.Writer, c *compare.Comparison, format string) error {
	switch format {
	case "json":
		out := *c
		if c.MaskTimes {
			out.Rows = append([]compare.Row(nil), c.Rows...)
			for i := range out.Rows {
				if out.Rows[i].Seconds != nil {
					out.Rows[i].Seconds = textfmt.Ptr(0.0)
				}
			}
		}
		return textfmt.JSON(w, out)
	case "csv":
		rows := [][]string{{"method", "placement", "micro_batches", "status", "repetend_bubble_rate", "makespan", "bubble_rate", "peak_memory", "budget_respected", "seconds", "proven", "note"}}
		if c.ShowLatency {
			rows[0] = append(rows[0], "max_latency", "mean_latency", "throughput")
		}
		for _, r := range c.Rows {
			peak := strings.Trim(textfmt.Ints(r.PeakMemory), "[]")
			secs := textfmt.OptFloat(r.Seconds, 6)
			if c.MaskTimes && r.Seconds != nil {
				secs = compare.TimePlaceholder
			}
			rows = append(rows, []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), r.Status,
				textfmt.OptFloat(r.RepetendBubbleRate, 6), textfmt.OptInt(r.Makespan), textfmt.OptFloat(r.BubbleRate, 6), peak,
				textfmt.OptBool(r.BudgetRespected), secs, textfmt.OptBool(r.Proven), r.Note})
			if c.ShowLatency {
				last := &rows[len(rows)-1]
				if l := r.Latency; l != nil {
					*last = append(*last, strconv.Itoa(l.Max), strconv.FormatFloat(l.Mean, 'f', -1, 64), strconv.FormatFloat(l.Throughput, 'f', -1, 64))
				} else {
					*last = append(*last, "", "", "")
				}
			}
		}
		return textfmt.CSV(w, rows)
	}
	var rows [][]string
	for _, r := range c.Rows {
		rows = append(rows, ComparisonCells(c, r))
	}
	if format == "table" {
		fmt.Fprintf(w, "%s\n\n", ComparisonTitle(c))
	}
	if err := textfmt.Table(w, format, comparisonHeader(c), rows); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintln(w, "\nrepetend bubble rate: the bubble rate as N grows (Tessel: the steady state of its schedule; a baseline: its steady state, as in Table II).")
		if c.ShowLatency {
			fmt.Fprintln(w, "latency: a micro-batch's first block's start to its last block's end (max / mean); throughput: micro-batches per time unit in the steady state.")
		}
		fmt.Fprintln(w, "× = no straightforward adaptation of the baseline to the placement. Every schedule shown passed the verifier.")
		if hasStatus(c, compare.StatusNoFit) || hasStatus(c, compare.StatusFailed) {
			fmt.Fprintln(w, "does not fit = the baseline's rule finds no schedule under the budget (the note says what one micro-batch needs); failed = it could not be built (the note says why).")
		}
	}
	return nil
}

// hasStatus reports whether some row of c has the status.
func hasStatus(c *compare.Comparison, status string) bool {
	for _, r := range c.Rows {
		if r.Status == status {
			return true
		}
	}
	return false
}

// ComparisonTitle is the comparison's heading.
func ComparisonTitle(c *compare.Comparison) string {
	memory := textfmt.Budget(c.Memory)
	if c.Budgets != nil {
		memory = textfmt.Ints(c.Budgets)
	}
	t := fmt.Sprintf("tessel compare: %s, %d devices, memory %s, %d micro-batches", c.Placement, c.Devices, memory, c.MicroBatches)
	if c.LatencyBudget > 0 {
		t += fmt.Sprintf(", latency budget %d", c.LatencyBudget)
	}
	return t
}

// comparisonHeader is CompareHeader, with the latency columns before the
// search time where the comparison shows latency.
func comparisonHeader(c *compare.Comparison) []string {
	h := CompareHeader()
	if !c.ShowLatency {
		return h
	}
	return append(h[:len(h)-2:len(h)-2], "latency (max / mean)", "throughput", h[len(h)-2], h[len(h)-1])
}

// ComparisonCells is a row as people read it, under CompareHeader.
func ComparisonCells(c *compare.Comparison, r compare.Row) []string {
	cells := comparisonCells(c, r)
	if !c.ShowLatency {
		return cells
	}
	lat, thr := "-", "-"
	switch {
	case r.Status == compare.StatusNotApplicable:
		lat, thr = "×", "×"
	case r.Latency != nil:
		lat = fmt.Sprintf("%d / %s", r.Latency.Max, strconv.FormatFloat(r.Latency.Mean, 'f', -1, 64))
		thr = strconv.FormatFloat(r.Latency.Throughput, 'f', -1, 64)
	}
	n := len(cells)
	return append(cells[:n-2:n-2], lat, thr, cells[n-2], cells[n-1])
}

func comparisonCells(c *compare.Comparison, r compare.Row) []string {
	if r.Status == compare.StatusNotApplicable {
		return []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), "×", "×", "×", "×", "×", "-", r.Note}
	}
	t := "-"
	if r.Seconds != nil {
		t = fmt.Sprintf("%.3fs", *r.Seconds)
		if c.MaskTimes {
			t = compare.TimePlaceholder
		}
	}
	switch r.Status {
	case compare.StatusNone, compare.StatusNoFit, compare.StatusFailed:
		return []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), r.Status, "-", "-", "-", "-", t, r.Note}
	}
	rate := "-"
	if r.RepetendBubbleRate != nil {
		rate = textfmt.Pct(*r.RepetendBubbleRate)
	}
	budgetText := textfmt.YesNo(*r.BudgetRespected)
	if r.Proven != nil && !*r.Proven {
		t += " (not proven)"
	}
	return []string{r.Method, r.Placement, strconv.Itoa(r.MicroBatches), rate, strconv.Itoa(*r.Makespan), textfmt.Pct(*r.BubbleRate), textfmt.Ints(r.PeakMemory), budgetText, t, r.Note}
}

// Chart is one row's schedule drawn.
type Chart struct {
	Title    string             // "<method> on <placement>"
	Slug     string             // a file name for it: "1f1b", "chimera-direct", …
	SVG      []byte             // the Gantt chart
	Schedule *schedule.Schedule // verified
}

// ComparisonCharts draws every row that has a schedule.
func ComparisonCharts(c *compare.Comparison) ([]Chart, error) {
	var charts []Chart
	for _, r := range c.Rows {
		if r.Schedule == nil {
			continue
		}
		var svg bytes.Buffer
		if err := render.SVG(r.Schedule, &svg); err != nil {
			return nil, err
		}
		slug := strings.NewReplacer(" ", "-", "(", "", ")", "", "=", "").Replace(strings.ToLower(r.Method))
		charts = append(charts, Chart{fmt.Sprintf("%s on %s", r.Method, r.Placement), slug, svg.Bytes(), r.Schedule})
	}
	return charts, nil
}

// StackedSVG is one SVG of the charts, one under the other, each a
// nested <svg> with a heading.
func StackedSVG(charts []Chart) []byte {
	var body bytes.Buffer
	y, width := 0, 0
	for _, ch := range charts {
		w, h := svgSize(ch.SVG)
		fmt.Fprintf(&body, "<text x=\"8\" y=\"%d\" font-family=\"sans-serif\" font-size=\"16\" font-weight=\"bold\">%s</text>\n", y+20, html.EscapeString(ch.Title))
		fmt.Fprintf(&body, "<svg x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\">\n%s</svg>\n", y+28, w, h, stripOuterSVG(ch.SVG))
		y += 28 + h + 12
		width = max(width, w)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", width, y, width, y)
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	return out.Bytes()
}

// ComparisonHTML is a self-contained page with the comparison's table
// and charts.
func ComparisonHTML(c *compare.Comparison, charts []Chart) []byte {
	var b bytes.Buffer
	title := ComparisonTitle(c)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>%s</title>\n", html.EscapeString(title))
	b.WriteString("<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #cccccc;padding:0.25em 0.75em;text-align:left}th{background:#f2f2f2}.chart{overflow-x:auto}</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<table>\n<tr>", html.EscapeString(title))
	for _, h := range comparisonHeader(c) {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr>\n")
	for _, r := range c.Rows {
		b.WriteString("<tr>")
		for _, cell := range ComparisonCells(c, r) {
			fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(cell))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	for _, ch := range charts {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<div class=\"chart\">\n%s</div>\n", html.EscapeString(ch.Title), ch.SVG)
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes()
}

var svgRoot = regexp.MustCompile(`^<svg[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"[^>]*>`)

// svgSize reads the width and height of a chart from its root element.
func svgSize(svg []byte) (w, h int) {
	if m := svgRoot.FindSubmatch(svg); m != nil {
		fmt.Sscan(string(m[1]), &w)
		fmt.Sscan(string(m[2]), &h)
	}
	return w, h
}

// stripOuterSVG returns the content of a chart's root element.
func stripOuterSVG(svg []byte) []byte {
	loc := svgRoot.FindIndex(svg)
	if loc == nil {
		return svg
	}
	inner := svg[loc[1]:]
	return bytes.TrimSuffix(bytes.TrimRight(inner, "\n"), []byte("</svg>"))
}
