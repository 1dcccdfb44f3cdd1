package report

import (
	"bytes"
	"fmt"
	"html"
	"io"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/schedule"
)

// WriteHTML writes the plan as one self-contained page (tessel plan
// --report): the plan against the baselines (the table, the winner, the
// levers), the Gantt chart of Tessel's schedule and of the fastest
// baseline that fits, and each device's memory at the peak of Tessel's
// schedule, as a table and as bars. It needs SetVersus first.
func (r *Plan) WriteHTML(w io.Writer) error {
	v := r.Versus
	if v == nil {
		return fmt.Errorf("plan report: no comparison with the baselines (SetVersus)")
	}
	in := r.plan
	s := in.Search.Schedule
	title := fmt.Sprintf("tessel plan: %s, %d devices, %d micro-batches", r.Partition.Model, s.Placement.Devices, s.MicroBatches)
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>%s</title>\n", html.EscapeString(title))
	b.WriteString("<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:0.5em 0}" +
		"td,th{border:1px solid #cccccc;padding:0.25em 0.75em;text-align:left}th{background:#f2f2f2}" +
		".chart{overflow-x:auto}.winner{font-weight:bold}</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(title))
	fmt.Fprintf(&b, "<p class=\"winner\" id=\"winner\">%s</p>\n", html.EscapeString(r.winnerText()))
	if lv := r.leversText(); lv != "" {
		fmt.Fprintf(&b, "<p id=\"levers\">%s</p>\n", html.EscapeString(lv))
	}
	fmt.Fprintf(&b, "<h2>Against the baselines</h2>\n<p>Each on the same stages, devices and budgets; time per iteration of %d micro-batches in the model's time unit, memory the fullest device's. Every schedule passed the verifier.</p>\n", s.MicroBatches)
	header, rows := r.versusTable()
	htmlTable(&b, "versus", header, rows)

	b.WriteString("<h2>Gantt chart</h2>\n")
	charts := []struct {
		title string
		s     *schedule.Schedule
	}{{"Tessel", s}}
	for _, row := range v.rows {
		if row.Method == v.Winner && row.Schedule != nil {
			charts = append(charts, struct {
				title string
				s     *schedule.Schedule
			}{row.Method, row.Schedule})
		}
	}
	for _, ch := range charts {
		var svg bytes.Buffer
		if err := render.SVG(ch.s, &svg); err != nil {
			return err
		}
		fmt.Fprintf(&b, "<h3>%s</h3>\n<div class=\"chart\">\n%s</div>\n", html.EscapeString(ch.title), svg.Bytes())
	}

	b.WriteString("<h2>Memory per device</h2>\n")
	if err := r.memoryHTML(&b); err != nil {
		return err
	}
	b.WriteString("</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func htmlTable(b *bytes.Buffer, class string, header []string, rows [][]string) {
	fmt.Fprintf(b, "<table class=\"%s\">\n<tr>", class)
	for _, h := range header {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// memoryHTML writes each device's memory at the peak of Tessel's
// schedule: a table (capacity, held for good, activations, total) and
// one bar per device, held for good and activations against its capacity.
// Without a memory model, the peak in placement units against the budget.
func (r *Plan) memoryHTML(b *bytes.Buffer) error {
	in := r.plan
	peak := r.Versus.Rows[0].PeakMemory
	p := in.Placement
	bytesModel := r.Partition.Graph.Bytes
	type bar struct{ static, act, capacity float64 }
	var bars []bar
	var rows [][]string
	var header []string
	if mem := in.Memory; mem != nil {
		header = []string{"device", "capacity", "held for good", "activations at the peak", "total", "budget (units)", "peak (units)"}
		f := func(x float64) string { return partition.FormatMemory(x, bytesModel) }
		for d, m := range mem {
			act := float64(peak[d]) * m.Unit
			rows = append(rows, []string{fmt.Sprint(d), f(m.Capacity), f(m.Static), f(act), f(m.Static + act), fmt.Sprint(m.Budget), fmt.Sprint(peak[d])})
			bars = append(bars, bar{m.Static, act, m.Capacity})
		}
	} else {
		header = []string{"device", "budget (units)", "peak (units)"}
		for d := range p.Devices {
			budget := p.Budget(d, in.Budget)
			rows = append(rows, []string{fmt.Sprint(d), fmt.Sprint(budget), fmt.Sprint(peak[d])})
			bars = append(bars, bar{0, float64(peak[d]), float64(budget)})
		}
	}
	htmlTable(b, "memory", header, rows)
	top := 0.0
	for _, x := range bars {
		top = max(top, x.capacity, x.static+x.act)
	}
	if top <= 0 {
		return nil
	}
	const width, rowH, left = 640.0, 22, 70
	height := len(bars)*rowH + 30
	fmt.Fprintf(b, "<div class=\"chart\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"memory\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		int(width)+left+10, height, int(width)+left+10, height)
	for d, x := range bars {
		y := d*rowH + 4
		sw, aw := width*x.static/top, width*x.act/top
		fmt.Fprintf(b, "<text x=\"4\" y=\"%d\">device %d</text>\n", y+14, d)
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#9c9c9c\"><title>held for good</title></rect>\n", left, y, sw)
		fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#4e79a7\"><title>activations at the peak</title></rect>\n", left+sw, y, aw)
		if x.capacity > 0 {
			fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"none\" stroke=\"#d62728\"><title>capacity</title></rect>\n", left, y, width*x.capacity/top)
		}
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">grey: held for good; blue: activations at the peak; red outline: capacity</text>\n", left, len(bars)*rowH+22)
	b.WriteString("</svg>\n</div>\n")
	return nil
}
