package main

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tessel-pp/tessel/schedule"
)

// writeFiles writes what --svg, --html and --schedules ask for: every
// row's schedule, each already verified.
func (c comparison) writeFiles(opts compareOptions) error {
	type chart struct {
		title string
		svg   []byte
		slug  string
		s     *schedule.Schedule
	}
	var charts []chart
	for _, r := range c.Rows {
		if r.schedule == nil {
			continue
		}
		svg, err := render(r.schedule, schedule.RenderSVG)
		if err != nil {
			return err
		}
		slug := strings.NewReplacer(" ", "-", "(", "", ")", "", "=", "").Replace(strings.ToLower(r.Method))
		charts = append(charts, chart{fmt.Sprintf("%s on %s", r.Method, r.Placement), svg, slug, r.schedule})
	}
	if opts.Schedules != "" {
		if err := os.MkdirAll(opts.Schedules, 0o755); err != nil {
			return usageErrorf("compare: %v", err)
		}
		for _, ch := range charts {
			data, err := render(ch.s, (*schedule.Schedule).Write)
			if err != nil {
				return err
			}
			if err := writeNew(filepath.Join(opts.Schedules, ch.slug+".json"), opts.Force, data); err != nil {
				return fmt.Errorf("compare: %w", err)
			}
		}
	}
	if opts.SVG != "" {
		// One chart under the other, each a nested <svg> with a heading.
		var body bytes.Buffer
		y, width := 0, 0
		for _, ch := range charts {
			w, h := svgSize(ch.svg)
			fmt.Fprintf(&body, "<text x=\"8\" y=\"%d\" font-family=\"sans-serif\" font-size=\"16\" font-weight=\"bold\">%s</text>\n", y+20, html.EscapeString(ch.title))
			fmt.Fprintf(&body, "<svg x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\">\n%s</svg>\n", y+28, w, h, stripOuterSVG(ch.svg))
			y += 28 + h + 12
			width = max(width, w)
		}
		var out bytes.Buffer
		fmt.Fprintf(&out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", width, y, width, y)
		out.Write(body.Bytes())
		out.WriteString("</svg>\n")
		if err := writeNew(opts.SVG, opts.Force, out.Bytes()); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	if opts.HTML != "" {
		var b bytes.Buffer
		title := fmt.Sprintf("tessel compare: %s, %d devices, memory %s, %d micro-batches", c.Placement, c.Devices, budget(c.Memory), c.MicroBatches)
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>%s</title>\n", html.EscapeString(title))
		b.WriteString("<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #cccccc;padding:0.25em 0.75em;text-align:left}th{background:#f2f2f2}.chart{overflow-x:auto}</style>\n</head>\n<body>\n")
		fmt.Fprintf(&b, "<h1>%s</h1>\n<table>\n<tr>", html.EscapeString(title))
		for _, h := range compareHeader {
			fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
		}
		b.WriteString("</tr>\n")
		for _, r := range c.Rows {
			b.WriteString("<tr>")
			for _, cell := range c.cells(r) {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(cell))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
		for _, ch := range charts {
			fmt.Fprintf(&b, "<h2>%s</h2>\n<div class=\"chart\">\n%s</div>\n", html.EscapeString(ch.title), ch.svg)
		}
		b.WriteString("</body>\n</html>\n")
		if err := writeNew(opts.HTML, opts.Force, b.Bytes()); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	return nil
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
