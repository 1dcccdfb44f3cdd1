package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// MaxTextUnits is how many time units Text draws; longer schedules
// are cut, and the rendering says how much.
const MaxTextUnits = 200

// Text draws s in the style of the paper's figures (Fig. 4, 8): one
// row per device, one cell per time unit. A cell shows the kind letter and
// micro-batch of the instance that starts there (f3: forward of
// micro-batch 3, b0: backward of micro-batch 0; upper case, F3, for a
// block on a device group, drawn on every device of the group), "--" where
// it goes on, "." when idle and "#" where instances overlap (an invalid
// schedule). A recompute shows as r3 on its devices; when s offloads,
// one row per host channel (named by its first device) shows offloads as
// >3 and reloads as <3. When s has a repetend, a row under the devices brackets the
// span [start, start+period) of its first iteration. Only the first
// MaxTextUnits units are drawn.
func Text(s *schedule.Schedule, w io.Writer) error {
	return TextUpTo(s, w, MaxTextUnits)
}

// TextUpTo is Text drawing only the first limit time units
// (at most MaxTextUnits), for a picture that fits a terminal.
func TextUpTo(s *schedule.Schedule, w io.Writer, limit int) error {
	if err := check(s); err != nil {
		return err
	}
	real, cellSteps := s, 1
	if u := s.Placement.Units; u.HasTime() && u.SearchStep() > 1 {
		// A placement in real units has steps far finer than a terminal
		// cell: draw its orders at the search's step (Retime on the
		// coarse copy: every instance keeps its device's order), with
		// the figures of the schedule itself.
		cellSteps = u.SearchStep()
		q, err := placement.Coarsen(s.Placement, cellSteps)
		if err != nil {
			return err
		}
		d, err := compact.Retime(s, q)
		if err != nil {
			return err
		}
		d.Repetend = nil
		s = d
	}
	m := schedule.Measure(s)
	units := min(m.Makespan, MaxTextUnits, max(limit, 1))
	g := paintGrid(s, units)
	g.real, g.cellSteps = real, cellSteps
	var out bytes.Buffer
	g.writeHead(&out, m)
	g.writeRows(&out)
	switch {
	case m.Makespan > units && cellSteps > 1:
		fmt.Fprintf(&out, "(cut: %d more cells not shown)\n", m.Makespan-units)
	case m.Makespan > units:
		fmt.Fprintf(&out, "(cut: %d more time units not shown, makespan %d)\n", m.Makespan-units, m.Makespan)
	}
	_, err := w.Write(out.Bytes())
	return err
}

// textGrid is a schedule painted into cells: one row per device, then one
// per host channel that carries offloads and reloads, units columns.
type textGrid struct {
	s        *schedule.Schedule
	units    int
	cells    [][]string
	channels []int
	// width is the widest label; overlap says a cell holds two instances.
	width   int
	overlap bool
	moves   []schedule.Move
	occ     schedule.Occupancy
	// real is the schedule drawn where s is its copy at cellSteps of its
	// steps a cell (a placement in real units); else s and 1.
	real      *schedule.Schedule
	cellSteps int
}

// paintGrid paints the recomputes, the host channels' moves and the
// instances of s, up to units.
func paintGrid(s *schedule.Schedule, units int) *textGrid {
	p := s.Placement
	g := &textGrid{s: s, units: units, width: 2, moves: schedule.Moves(s), occ: schedule.OccupancyOf(s)}
	g.cells = make([][]string, p.Devices)
	for d := range g.cells {
		g.cells[d] = make([]string, units)
	}
	// Host channels that carry offloads and reloads get rows of their
	// own under the devices.
	for _, mv := range g.moves {
		if len(g.channels) == 0 || g.channels[len(g.channels)-1] != mv.Channel {
			g.channels = append(g.channels, mv.Channel)
		}
	}
	hostRow := map[int]int{}
	for k, c := range g.channels {
		hostRow[c] = p.Devices + k
		g.cells = append(g.cells, make([]string, units))
	}
	for _, rr := range schedule.Reruns(s) {
		b := p.Blocks[rr.Ref.Block]
		l := "r" + strconv.Itoa(rr.Ref.Micro)
		if len(b.Devices) > 1 {
			l = "R" + strconv.Itoa(rr.Ref.Micro)
		}
		for _, d := range b.Devices {
			g.paint(d, rr.Start, b.Time, l)
		}
	}
	for _, mv := range g.moves {
		l := ">" + strconv.Itoa(mv.Ref.Micro)
		if mv.Reload {
			l = "<" + strconv.Itoa(mv.Ref.Micro)
		}
		g.paint(hostRow[mv.Channel], mv.Start, mv.End-mv.Start, l)
	}
	for _, in := range s.Instances {
		if in.Block < 0 || in.Block >= len(p.Blocks) || g.occ.Follower(in.Ref()) {
			continue
		}
		b := p.Blocks[in.Block]
		l := kindLetter(b.Kind)
		if len(b.Devices) > 1 {
			l = strings.ToUpper(l)
		}
		l += strconv.Itoa(in.Micro)
		if pr, ok := g.occ.Partner(in.Ref()); ok && g.occ.Paired() {
			l += "+b" + strconv.Itoa(pr.Micro)
		}
		for _, d := range b.Devices {
			g.paint(d, in.Start, g.occ.Duration(p, in.Ref()), l)
		}
		g.width = max(g.width, len(l))
	}
	return g
}

// paint marks row's cells from start for time units with label l: l where
// it starts, "-" after, "#" where a cell is taken.
func (g *textGrid) paint(row, start, time int, l string) {
	g.width = max(g.width, len(l))
	for t := max(start, 0); t < min(start+time, g.units); t++ {
		switch {
		case g.cells[row][t] != "":
			g.cells[row][t], g.overlap = "#", true
		case t == start:
			g.cells[row][t] = l
		default:
			g.cells[row][t] = "-"
		}
	}
}

// writeHead writes the title, the legend and the repetend's line.
func (g *textGrid) writeHead(out *bytes.Buffer, m schedule.Metrics) {
	s, p := g.s, g.s.Placement
	name := p.Name
	if name == "" {
		name = "(unnamed)"
	}
	if g.cellSteps > 1 {
		real := g.real
		rm, u := schedule.Measure(real), real.Placement.Units
		fmt.Fprintf(out, "%s: %d %s, %d micro-batches, %s, makespan %s, bubble rate %.1f%%\n",
			name, p.Devices, plural(p.Devices, "device"), s.MicroBatches, budgetText(real), u.Duration(float64(rm.Makespan)), 100*rm.BubbleRate)
		fmt.Fprintf(out, "drawn at %s a cell: every device's order, the times rounded to cells (the figures are the schedule's)\n", u.StepText(float64(g.cellSteps)))
	} else {
		fmt.Fprintf(out, "%s: %d %s, %d micro-batches, %s, makespan %d, bubble rate %.1f%%\n",
			name, p.Devices, plural(p.Devices, "device"), s.MicroBatches, budgetText(s), m.Makespan, 100*m.BubbleRate)
	}
	legend := "legend: f3/b3 forward/backward of micro-batch 3, F3/B3 on a device group, -- running on, . idle"
	if hasKind(p, placement.Input) || hasKind(p, placement.Weight) {
		legend = "legend: f3/i3/w3 forward/input gradient/weight gradient of micro-batch 3, b3 whole backward, F3 on a device group, -- running on, . idle"
	}
	if len(schedule.Reruns(s)) > 0 {
		legend += ", r3 forward of micro-batch 3 recomputed"
	}
	if len(g.moves) > 0 {
		legend += ", >3/<3 offload/reload of micro-batch 3 on a host channel"
	}
	if g.occ.Paired() {
		legend += ", f3+b1 forward of micro-batch 3 overlapped with the whole backward of 1"
	}
	if g.overlap {
		legend += ", # overlap"
	}
	rp := s.Repetend
	if rp != nil {
		legend += ", [==] first repetend iteration"
	}
	out.WriteString(legend + "\n")
	if rp != nil {
		fmt.Fprintf(out, "repetend: nr %d, period %d, %d %s from time %d\n", rp.Span(), rp.Period, rp.Iterations, plural(rp.Iterations, "iteration"), rp.Start)
	}
}

// writeRows writes the time axis, a row per device and host channel, and
// the bracket of the repetend's first iteration.
func (g *textGrid) writeRows(out *bytes.Buffer) {
	p, units, width := g.s.Placement, g.units, g.width
	// The axis is in the model's time where cells are the search's steps.
	timeHead := "time"
	tick := func(t int) string { return strconv.Itoa(t) }
	if g.cellSteps > 1 {
		u := g.real.Placement.Units
		if u.Time != "" {
			timeHead = "time (" + u.Time + ")"
		}
		tick = func(t int) string {
			return strconv.FormatFloat(math.Round(u.InUnit(float64(t*g.cellSteps))*1e6)/1e6, 'f', -1, 64)
		}
	}
	heads := []string{timeHead, "repetend"}
	for d := range p.Devices {
		heads = append(heads, fmt.Sprintf("dev %d", d))
	}
	for _, c := range g.channels {
		heads = append(heads, fmt.Sprintf("host %d", c))
	}
	lead := 0
	for _, h := range heads {
		lead = max(lead, len(h))
	}
	lead++
	cell := width + 1 // a cell and its separating space

	// The axis: a tick every 5 units (every unit is too crowded for
	// three-digit times).
	axis := []byte(fmt.Sprintf("%-*s", lead, timeHead))
	for t := 0; t < units; t += 5 {
		col := lead + t*cell
		for len(axis) < col {
			axis = append(axis, ' ')
		}
		axis = append(axis, tick(t)...)
	}
	out.Write(bytes.TrimRight(axis, " "))
	out.WriteByte('\n')

	for d := range g.cells {
		head := fmt.Sprintf("dev %d", d)
		if d >= p.Devices {
			head = fmt.Sprintf("host %d", g.channels[d-p.Devices])
		}
		var line strings.Builder
		line.WriteString(fmt.Sprintf("%-*s", lead, head))
		for t := range units {
			c := g.cells[d][t]
			switch c {
			case "":
				c = "."
			case "-":
				c = strings.Repeat("-", width)
			case "#":
				c = strings.Repeat("#", width)
			}
			fmt.Fprintf(&line, "%-*s ", width, c)
		}
		out.WriteString(strings.TrimRight(line.String(), " "))
		out.WriteByte('\n')
	}

	if rp := g.s.Repetend; rp != nil {
		lo, hi := max(rp.Start, 0), min(rp.Start+rp.Period, units)
		if lo < hi {
			row := []byte(fmt.Sprintf("%-*s", lead, "repetend"))
			for len(row) < lead+lo*cell {
				row = append(row, ' ')
			}
			span := bytes.Repeat([]byte{'='}, (hi-lo)*cell-1)
			span[0] = '['
			if hi == rp.Start+rp.Period {
				span[len(span)-1] = ']'
			}
			out.Write(append(row, span...))
			out.WriteByte('\n')
		}
	}
}

// kindLetter is the letter of a block kind in renderings (f, b, i, w), or
// an unknown kind's first letter.
func kindLetter(k placement.Kind) string {
	if in, ok := k.Info(); ok {
		return string(in.Letter)
	}
	if k == "" {
		return "?"
	}
	return strings.ToLower(string(k[:1]))
}

// hasKind reports whether a block of p has kind k.
func hasKind(p *placement.Placement, k placement.Kind) bool {
	for _, b := range p.Blocks {
		if b.Kind == k {
			return true
		}
	}
	return false
}

// budgetText is "memory 4", "memory unlimited", or, where the devices'
// budgets differ (a cluster's or a model's capacities), "memory [4 6 6 4]".
func budgetText(s *schedule.Schedule) string {
	p, m := s.Placement, s.Memory
	// In bytes where the placement says what a unit is.
	mem := strconv.Itoa
	if u := p.Units; u.HasMemory() {
		mem = func(x int) string {
			if x == 0 {
				return "unlimited"
			}
			return u.Memory(float64(x))
		}
	}
	if !p.Uniform(m) {
		parts := make([]string, p.Devices)
		for d, b := range p.Budgets(m) {
			parts[d] = mem(b)
		}
		if p.Units.HasMemory() {
			return "memory [" + strings.Join(parts, ", ") + "]"
		}
		return "memory [" + strings.Join(parts, " ") + "]"
	}
	m = p.Budget(0, m)
	if m == 0 {
		return "memory unlimited"
	}
	return "memory " + mem(m)
}
