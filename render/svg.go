package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/schedule"
)

// SVG geometry, in pixels.
const (
	svgLeft     = 64   // device labels
	svgTop      = 56   // title and axis
	svgRow      = 28   // one device
	svgRight    = 16   // margin
	svgBottom   = 24   // margin
	svgWidth    = 1200 // the time axis when units are narrow
	svgMaxUnit  = 24   // widest time unit
	svgMinLabel = 10   // narrowest bar with its micro-batch number
)

// SVG draws s as a Gantt chart: one row per device, one bar per
// instance (its kind's class and colour, KindStyle: "fwd"
// blue, "bwd" orange, "inp" green, "wgt" purple; with its
// micro-batch number inside when it fits and a tooltip), a time axis with
// ticks, red vertical lines (class "repetend") at every repetend iteration
// boundary when s has a repetend, and a title with the placement, N, the
// memory budget and the bubble rate.
//
// A block on a device group is one bar spanning its rows when the group's
// devices are contiguous; otherwise it is one bar on each member's row.
// Either way every bar carries data-block and data-micro, so the bars of
// one instance can be counted by their distinct (data-block, data-micro).
//
// A schedule of a placement whose blocks chose their devices (candidates)
// gets a row per link that a transfer taking time crosses ("link 0>1",
// under the devices and host channels), with a grey bar (class
// "transfer", data-dep "op3->op7", data-micro) per transfer (Transfers).
func SVG(s *schedule.Schedule, w io.Writer) error {
	if err := check(s); err != nil {
		return err
	}
	var b bytes.Buffer
	writeSVG(&b, s, schedule.Measure(s))
	_, err := w.Write(b.Bytes())
	return err
}

func writeSVG(b *bytes.Buffer, s *schedule.Schedule, m schedule.Metrics) {
	p := s.Placement
	span := max(m.Makespan, 1)
	unit := math.Min(svgMaxUnit, float64(svgWidth)/float64(span))
	width := svgLeft + float64(span)*unit + svgRight
	moves := schedule.Moves(s)
	var channels []int
	for _, mv := range moves {
		if len(channels) == 0 || channels[len(channels)-1] != mv.Channel {
			channels = append(channels, mv.Channel)
		}
	}
	links, spans := linkRows(s)
	height := svgTop + (p.Devices+len(channels)+len(links))*svgRow + svgBottom
	x := func(t int) string { return num(svgLeft + float64(t)*unit) }
	rowY := func(d int) int { return svgTop + d*svgRow }

	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%d" viewBox="0 0 %s %d" font-family="sans-serif" font-size="12">`+"\n",
		num(width), height, num(width), height)
	b.WriteString("<style>")
	for _, k := range placement.Kinds() {
		class, colour := KindStyle(k)
		fmt.Fprintf(b, ".%s{fill:%s}", class, colour)
	}
	if len(links) > 0 {
		fmt.Fprintf(b, ".transfer{fill:%s;stroke:#ffffff;stroke-width:0.5}", colourTransfer)
	}
	if len(s.Decisions) > 0 {
		fmt.Fprintf(b, ".recompute{fill:%s;fill-opacity:0.5}.offload{fill:%s}.reload{fill:%s}", kindColour(placement.Forward), colourOffload, colourReload)
	}
	fmt.Fprintf(b, ".other{fill:%s}.repetend{stroke:%s;stroke-width:2}.bar{stroke:#ffffff;stroke-width:0.5}.micro{fill:#ffffff;font-size:10px;text-anchor:middle;dominant-baseline:central}.tick{stroke:#888888}</style>\n",
		colourOther, colourRepetend)
	fmt.Fprintf(b, `<text class="title" x="%d" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", svgLeft, esc(title(s, m)))

	// Time axis: a tick every step units, step from 1, 2, 5, 10, 20, ...
	// so that there are at most about 20; in the model's time where the
	// placement says what a step is.
	axisY := svgTop - 6
	fmt.Fprintf(b, `<g class="axis"><line class="tick" x1="%s" y1="%d" x2="%s" y2="%d"/>`+"\n", x(0), axisY, x(span), axisY)
	if u := p.Units; u.HasTime() {
		ticks, label := timeTicks(u, span)
		for _, t := range ticks {
			xt := num(svgLeft + t/u.Step*unit)
			fmt.Fprintf(b, `<line class="tick" x1="%s" y1="%d" x2="%s" y2="%d"/><text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n",
				xt, axisY-4, xt, axisY, xt, axisY-8, strconv.FormatFloat(t, 'f', -1, 64))
		}
		if label != "" {
			fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgLeft-8, axisY-8, esc(label))
		}
	} else {
		step := tickStep(span)
		for i := 0; i <= span/step; i++ { // not t += step: no overflow near MaxInt
			t := i * step
			fmt.Fprintf(b, `<line class="tick" x1="%s" y1="%d" x2="%s" y2="%d"/><text x="%s" y="%d" text-anchor="middle">%d</text>`+"\n",
				x(t), axisY-4, x(t), axisY, x(t), axisY-8, t)
		}
	}
	b.WriteString("</g>\n")

	// Device rows.
	b.WriteString(`<g class="devices">` + "\n")
	for d := range p.Devices {
		fmt.Fprintf(b, `<rect x="%s" y="%d" width="%s" height="%d" fill="#f2f2f2"/><text x="%d" y="%d" text-anchor="end" dominant-baseline="central">dev %d</text>`+"\n",
			x(0), rowY(d), num(float64(span)*unit), svgRow-2, svgLeft-8, rowY(d)+svgRow/2-1, d)
	}
	for k, c := range channels {
		fmt.Fprintf(b, `<rect x="%s" y="%d" width="%s" height="%d" fill="#f2f2f2"/><text x="%d" y="%d" text-anchor="end" dominant-baseline="central">host %d</text>`+"\n",
			x(0), rowY(p.Devices+k), num(float64(span)*unit), svgRow-2, svgLeft-8, rowY(p.Devices+k)+svgRow/2-1, c)
	}
	for k, l := range links {
		fmt.Fprintf(b, `<rect x="%s" y="%d" width="%s" height="%d" fill="#f2f2f2"/><text x="%d" y="%d" text-anchor="end" dominant-baseline="central">link %d&gt;%d</text>`+"\n",
			x(0), rowY(p.Devices+len(channels)+k), num(float64(span)*unit), svgRow-2, svgLeft-8, rowY(p.Devices+len(channels)+k)+svgRow/2-1, l.From, l.To)
	}
	b.WriteString("</g>\n")

	// Bars, in file order.
	ins := sorted(s)
	b.WriteString(`<g class="instances">` + "\n")
	occ := schedule.OccupancyOf(s)
	for _, in := range ins {
		if in.Block < 0 || in.Block >= len(p.Blocks) || occ.Follower(in.Ref()) {
			continue
		}
		blk := p.Blocks[in.Block]
		class, fill := KindStyle(blk.Kind)
		t := occ.Duration(p, in.Ref())
		tip := fmt.Sprintf("%s^%d [%d,%d) on %s", blk.ID, in.Micro, in.Start, in.Start+t, deviceList(blk.Devices))
		label := strconv.Itoa(in.Micro)
		g, paired := occ.Partner(in.Ref())
		if paired {
			tip = fmt.Sprintf("%s overlapped [%d,%d) on %s", schedule.PairText(s, schedule.Pair{Forward: in.Ref(), Backward: g}), in.Start, in.Start+t, deviceList(blk.Devices))
			label += "+" + strconv.Itoa(g.Micro)
		}
		for _, rows := range rowRuns(blk.Devices) {
			y0, y1 := rowY(rows[0]), rowY(rows[1])+svgRow-2
			bw := float64(t) * unit
			if paired {
				// The forward's colour above, the backward's below: one action.
				gc, gfill := KindStyle(placement.Backward)
				h := (y1 - y0) / 2
				fmt.Fprintf(b, `<rect class="bar %s overlapped" data-block="%s" data-micro="%d" x="%s" y="%d" width="%s" height="%d" fill="%s"><title>%s</title></rect>`,
					class, esc(blk.ID), in.Micro, x(in.Start), y0, num(bw), h, fill, esc(tip))
				fmt.Fprintf(b, `<rect class="bar %s overlapped" data-block="%s" data-micro="%d" x="%s" y="%d" width="%s" height="%d" fill="%s"><title>%s</title></rect>`,
					gc, esc(p.Blocks[g.Block].ID), g.Micro, x(in.Start), y0+h, num(bw), y1-y0-h, gfill, esc(tip))
			} else {
				fmt.Fprintf(b, `<rect class="bar %s" data-block="%s" data-micro="%d" x="%s" y="%d" width="%s" height="%d" fill="%s"><title>%s</title></rect>`,
					class, esc(blk.ID), in.Micro, x(in.Start), y0, num(bw), y1-y0, fill, esc(tip))
			}
			if bw >= svgMinLabel {
				fmt.Fprintf(b, `<text class="micro" x="%s" y="%d">%s</text>`, num(svgLeft+(float64(in.Start)+float64(t)/2)*unit), (y0+y1)/2, label)
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("</g>\n")
	writeDecisionBars(b, s, moves, channels, svgAxes{unit, x, rowY})
	writeTransferBars(b, s, links, spans, svgAxes{unit, x, func(k int) int { return rowY(p.Devices + len(channels) + k) }})

	// Repetend iteration boundaries.
	if rp := s.Repetend; rp != nil && rp.Period > 0 && rp.Iterations > 0 && rp.Iterations <= schedule.MaxMicroBatches {
		b.WriteString(`<g class="repetends">` + "\n")
		for k := 0; k <= rp.Iterations; k++ {
			t := rp.Start + k*rp.Period
			fmt.Fprintf(b, `<line class="repetend" x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s"><title>repetend iteration %d starts at %d</title></line>`+"\n",
				x(t), svgTop-4, x(t), rowY(p.Devices)+2, colourRepetend, k, t)
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
}

// title is the one-line caption of a rendering.
func title(s *schedule.Schedule, m schedule.Metrics) string {
	name := s.Placement.Name
	if name == "" {
		name = "(unnamed)"
	}
	makespan := strconv.Itoa(m.Makespan)
	if u := s.Placement.Units; u.HasTime() {
		makespan = u.Duration(float64(m.Makespan))
	}
	return fmt.Sprintf("%s: %d %s, N = %d micro-batches, %s, makespan %s, bubble rate %.2f%%",
		name, s.Placement.Devices, plural(s.Placement.Devices, "device"), s.MicroBatches, budgetText(s), makespan, 100*m.BubbleRate)
}

// timeTicks are the ticks of a time axis over span steps of u, in u's
// time unit: a tick every 1, 2 or 5 × 10^k, at most about 20; label is the
// unit ("ms", or "" where the model names none).
func timeTicks(u *quantity.Scale, span int) (ticks []float64, label string) {
	total := u.InUnit(float64(span))
	step := math.Pow(10, math.Floor(math.Log10(max(total, 1e-300)/20)))
	for _, f := range []float64{1, 2, 5, 10} {
		if total/(step*f) <= 20 {
			step *= f
			break
		}
	}
	for i := 0; float64(i)*step <= total*(1+1e-12); i++ {
		ticks = append(ticks, math.Round(float64(i)*step*1e9)/1e9)
	}
	return ticks, u.Time
}

// rowRuns splits sorted devices into runs of consecutive ones, as
// [first, last] pairs: one bar per run.
func rowRuns(devs []int) [][2]int {
	var runs [][2]int
	for _, d := range devs {
		if n := len(runs); n > 0 && runs[n-1][1] == d-1 {
			runs[n-1][1] = d
			continue
		}
		runs = append(runs, [2]int{d, d})
	}
	return runs
}

// tickStep is the smallest of 1, 2, 5, 10, 20, 50, ... that gives at most
// 20 ticks over span units.
func tickStep(span int) int {
	for step := 1; ; step *= 10 {
		for _, f := range []int{1, 2, 5} {
			if span/(step*f) <= 20 {
				return step * f
			}
		}
	}
}

// num formats a coordinate with at most two decimals, deterministically.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// esc escapes text for XML content and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // writes to a strings.Builder cannot fail
	return b.String()
}

// svgAxes place a chart's bars: unit is the width of one time step, x a
// time's coordinate and rowY a row's top.
type svgAxes struct {
	unit float64
	x    func(int) string
	rowY func(int) int
}

// writeDecisionBars draws the recomputes (class "recompute", the
// forward's colour, half transparent) on their devices and the offloads
// and reloads (classes "offload", "reload") on host-channel rows under the
// devices, each with data-block, data-micro and a tooltip.
func writeDecisionBars(b *bytes.Buffer, s *schedule.Schedule, moves []schedule.Move, channels []int, ax svgAxes) {
	unit, x, rowY := ax.unit, ax.x, ax.rowY
	if len(s.Decisions) == 0 {
		return
	}
	p := s.Placement
	b.WriteString(`<g class="decisions">` + "\n")
	for _, rr := range schedule.Reruns(s) {
		blk := p.Blocks[rr.Ref.Block]
		tip := fmt.Sprintf("recompute of %s^%d [%d,%d) on %s", blk.ID, rr.Ref.Micro, rr.Start, rr.Start+blk.Time, deviceList(blk.Devices))
		for _, rows := range rowRuns(blk.Devices) {
			y0, y1 := rowY(rows[0]), rowY(rows[1])+svgRow-2
			fmt.Fprintf(b, `<rect class="bar recompute" data-block="%s" data-micro="%d" x="%s" y="%d" width="%s" height="%d"><title>%s</title></rect>`+"\n",
				esc(blk.ID), rr.Ref.Micro, x(rr.Start), y0, num(float64(blk.Time)*unit), y1-y0, esc(tip))
		}
	}
	row := map[int]int{}
	for k, c := range channels {
		row[c] = p.Devices + k
	}
	for _, mv := range moves {
		blk := p.Blocks[mv.Ref.Block]
		class, what := "offload", "offload"
		if mv.Reload {
			class, what = "reload", "reload"
		}
		tip := fmt.Sprintf("%s of %s^%d [%d,%d) on host channel %d", what, blk.ID, mv.Ref.Micro, mv.Start, mv.End, mv.Channel)
		y0 := rowY(row[mv.Channel])
		bw := float64(mv.End-mv.Start) * unit
		fmt.Fprintf(b, `<rect class="bar %s" data-block="%s" data-micro="%d" x="%s" y="%d" width="%s" height="%d"><title>%s</title></rect>`,
			class, esc(blk.ID), mv.Ref.Micro, x(mv.Start), y0, num(bw), svgRow-2, esc(tip))
		if bw >= svgMinLabel {
			fmt.Fprintf(b, `<text class="micro" x="%s" y="%d">%d</text>`, num(svgLeft+(float64(mv.Start)+float64(mv.End-mv.Start)/2)*unit), y0+svgRow/2-1, mv.Ref.Micro)
		}
		b.WriteByte('\n')
	}
	b.WriteString("</g>\n")
}

// writeTransferBars draws the transfers on their link rows.
func writeTransferBars(b *bytes.Buffer, s *schedule.Schedule, links []placement.Link, spans []schedule.TransferSpan, ax svgAxes) {
	unit, x, rowY := ax.unit, ax.x, ax.rowY
	if len(links) == 0 {
		return
	}
	p := s.Placement
	b.WriteString(`<g class="transfers">` + "\n")
	for _, t := range spans {
		k := slices.Index(links, t.Link)
		dep := p.Blocks[t.Dep.From].ID + "->" + p.Blocks[t.Dep.To].ID
		tip := fmt.Sprintf("transfer %s [%d,%d) on link %d->%d", transferName(p, t), t.Start, t.End, t.Link.From, t.Link.To)
		fmt.Fprintf(b, `<rect class="transfer" data-dep="%s" data-micro="%d" x="%s" y="%d" width="%s" height="%d"><title>%s</title></rect>`+"\n",
			esc(dep), t.Micro, x(t.Start), rowY(k), num(float64(t.End-t.Start)*unit), svgRow-2, esc(tip))
	}
	b.WriteString("</g>\n")
}
