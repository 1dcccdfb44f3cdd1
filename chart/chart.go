// Package chart draws line charts as SVG: a few named series of (x, y)
// points, one coloured line with markers per series, axes with ticks, a
// title and a legend. tessel uses it for the bubble-rate charts of
// tessel sweep (the paper's Fig. 11 and 12).
//
// The output is deterministic: the same chart gives the same bytes on
// every run and platform (fixed palette, fixed number formatting, no
// fonts measured, no timestamps). It is not a plotting library: linear
// axes only, and the y axis always includes zero.
package chart

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Point is one point of a series. A NaN Y is a gap: the line breaks there
// and no marker is drawn (a value that does not exist, e.g. no schedule
// fits the memory budget).
type Point struct{ X, Y float64 }

// Series is one line of the chart.
type Series struct {
	Name   string
	Points []Point // drawn in this order
}

// Line is a line chart.
type Line struct {
	Title  string
	XLabel string
	YLabel string
	// YSuffix is appended to the y tick labels (e.g. "%").
	YSuffix string
	// IntegerX puts the x ticks on integers only (N_R, memory budgets).
	IntegerX bool
	Series   []Series
	// Width and Height in pixels; 0 takes 720 × 440.
	Width, Height int
}

// palette and markers are cycled through by series index: colours that
// stay apart for colour-blind readers, and a distinct marker shape per
// series so that lines lying on top of each other remain readable.
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442"}

const markerKinds = 5 // circle, square, triangle, diamond, cross

// Geometry of the plot area inside the canvas, in pixels.
const (
	marginLeft   = 64
	marginRight  = 150 // at least; more when legend names are long
	marginTop    = 40
	marginBottom = 52
	markerSize   = 4.0
)

// WriteSVG writes the chart as a standalone SVG document. It fails when
// there is nothing to draw or a value is infinite.
func (c *Line) WriteSVG(w io.Writer) error {
	width, height := c.Width, c.Height
	if width == 0 {
		width = 720
	}
	if height == 0 {
		height = 440
	}
	// The legend's width is estimated from its longest name (about 7
	// pixels a character at 12 pixels): no font is measured.
	right := marginRight
	for _, s := range c.Series {
		right = max(right, 36+7*utf8.RuneCountInString(s.Name)+24)
	}
	if width < marginLeft+right+40 || height < marginTop+marginBottom+40 {
		return fmt.Errorf("chart %q: %d×%d pixels is too small", c.Title, width, height)
	}
	xlo, xhi, ylo, yhi, err := c.bounds()
	if err != nil {
		return err
	}
	xt := ticks(xlo, xhi, 10, c.IntegerX)
	yt := ticks(ylo, yhi+0.04*(yhi-ylo), 6, false) // headroom above the highest point
	xlo, xhi = min(xlo, xt[0]), max(xhi, xt[len(xt)-1])
	ylo, yhi = min(ylo, yt[0]), max(yhi, yt[len(yt)-1])
	if xhi == xlo { // one x value: centre it
		xlo, xhi = xlo-1, xhi+1
		xt = []float64{xlo + 1}
	}
	pw := float64(width - marginLeft - right)
	ph := float64(height - marginTop - marginBottom)
	px := func(x float64) float64 { return marginLeft + (x-xlo)/(xhi-xlo)*pw }
	py := func(y float64) float64 { return marginTop + ph - (y-ylo)/(yhi-ylo)*ph }

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(b, `<title>%s</title>`+"\n", esc(c.Title))
	fmt.Fprintf(b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="%s" y="24" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n", num(float64(width)/2), esc(c.Title))

	// Grid and ticks.
	b.WriteString(`<g stroke="#dddddd" stroke-width="1">` + "\n")
	for _, y := range yt {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(px(xlo)), num(py(y)), num(px(xhi)), num(py(y)))
	}
	for _, x := range xt {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(px(x)), num(py(ylo)), num(px(x)), num(py(yhi)))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#333333"/>`+"\n", marginLeft, marginTop, num(pw), num(ph))
	b.WriteString(`<g fill="#333333">` + "\n")
	for _, x := range xt {
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(px(x)), num(py(ylo)+16), label(x, ""))
	}
	for _, y := range yt {
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", num(px(xlo)-6), num(py(y)+4), label(y, c.YSuffix))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", num(marginLeft+pw/2), height-12, esc(c.XLabel))
	fmt.Fprintf(b, `<text transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`+"\n", num(marginTop+ph/2), esc(c.YLabel))

	// Lines, then markers on top, then the legend.
	for i, s := range c.Series {
		colour := palette[i%len(palette)]
		fmt.Fprintf(b, `<g class="series" fill="none" stroke="%s" stroke-width="2">`+"\n", colour)
		var run []string
		flush := func() {
			if len(run) > 1 {
				fmt.Fprintf(b, `<polyline points="%s"/>`+"\n", strings.Join(run, " "))
			}
			run = run[:0]
		}
		for _, p := range s.Points {
			if math.IsNaN(p.Y) {
				flush()
				continue
			}
			run = append(run, num(px(p.X))+","+num(py(p.Y)))
		}
		flush()
		for _, p := range s.Points {
			if !math.IsNaN(p.Y) {
				marker(b, i, px(p.X), py(p.Y), colour)
			}
		}
		b.WriteString("</g>\n")
	}
	lx := float64(width-right) + 16
	for i, s := range c.Series {
		colour := palette[i%len(palette)]
		y := float64(marginTop) + 10 + float64(i)*20
		fmt.Fprintf(b, `<g class="legend" fill="none" stroke="%s" stroke-width="2"><line x1="%s" y1="%s" x2="%s" y2="%s"/>`, colour, num(lx), num(y), num(lx+28), num(y))
		marker(b, i, lx+14, y, colour)
		fmt.Fprintf(b, `<text x="%s" y="%s" fill="#333333" stroke="none">%s</text></g>`+"\n", num(lx+36), num(y+4), esc(s.Name))
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

// bounds is the range of the data; the y range always includes zero.
func (c *Line) bounds() (xlo, xhi, ylo, yhi float64, err error) {
	if len(c.Series) == 0 {
		return 0, 0, 0, 0, fmt.Errorf("chart %q: no series", c.Title)
	}
	xlo, xhi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if math.IsInf(p.X, 0) || math.IsNaN(p.X) || math.IsInf(p.Y, 0) {
				return 0, 0, 0, 0, fmt.Errorf("chart %q: series %q: point (%v, %v) cannot be drawn", c.Title, s.Name, p.X, p.Y)
			}
			xlo, xhi = min(xlo, p.X), max(xhi, p.X)
			if !math.IsNaN(p.Y) {
				ylo, yhi = min(ylo, p.Y), max(yhi, p.Y)
			}
		}
	}
	if math.IsInf(xlo, 1) {
		return 0, 0, 0, 0, errors.New("chart " + strconv.Quote(c.Title) + ": no points")
	}
	if yhi == ylo {
		yhi = ylo + 1
	}
	return xlo, xhi, ylo, yhi, nil
}

// ticks returns at most about n evenly spaced round values covering
// [lo, hi]: steps of 1, 2 or 5 times a power of ten (integers only when
// asked).
func ticks(lo, hi float64, n int, integer bool) []float64 {
	span := hi - lo
	if span <= 0 {
		return []float64{lo}
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, f := range []float64{1, 2, 5, 10} {
		step = f * mag
		if step >= raw {
			break
		}
	}
	if integer && step < 1 {
		step = 1
	}
	first := math.Floor(lo/step+1e-9) * step
	var out []float64
	for k := 0; ; k++ {
		v := first + float64(k)*step
		out = append(out, v)
		if v >= hi-1e-9*step {
			break
		}
	}
	return out
}

// marker draws series i's marker shape centred at (x, y), hollow so
// that markers of several series on the same point all stay visible.
func marker(b *bufio.Writer, i int, x, y float64, colour string) {
	r := markerSize
	style := fmt.Sprintf(` fill="#ffffff" stroke="%s" stroke-width="1.5"`, colour)
	switch i % markerKinds {
	case 0:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s"%s/>`, num(x), num(y), num(r+1), style)
	case 1:
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s"%s/>`, num(x-r), num(y-r), num(2*r), num(2*r), style)
	case 2:
		fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s"%s/>`, num(x), num(y-r-2), num(x-r-1), num(y+r), num(x+r+1), num(y+r), style)
	case 3:
		fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s %s,%s"%s/>`, num(x), num(y-r-2), num(x+r+2), num(y), num(x), num(y+r+2), num(x-r-2), num(y), style)
	default:
		fmt.Fprintf(b, `<path d="M%s %sL%s %sM%s %sL%s %s" fill="none" stroke="%s" stroke-width="2"/>`, num(x-r), num(y-r), num(x+r), num(y+r), num(x-r), num(y+r), num(x+r), num(y-r), colour)
	}
	b.WriteString("\n")
}

// num formats a coordinate with at most two decimals and no trailing
// zeros: short, and the same bytes everywhere.
func num(v float64) string {
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// label formats a tick value: integers without decimals.
func label(v float64, suffix string) string {
	return num(v) + esc(suffix)
}

func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
