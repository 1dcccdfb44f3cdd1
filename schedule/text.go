package schedule

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// MaxTextUnits is how many time units RenderText draws; longer schedules
// are cut, and the rendering says how much.
const MaxTextUnits = 200

// RenderText draws s in the style of the paper's figures (Fig. 4, 8): one
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
func RenderText(s *Schedule, w io.Writer) error {
	return RenderTextUpTo(s, w, MaxTextUnits)
}

// RenderTextUpTo is RenderText drawing only the first limit time units
// (at most MaxTextUnits), for a picture that fits a terminal.
func RenderTextUpTo(s *Schedule, w io.Writer, limit int) error {
	if err := checkRenderable(s); err != nil {
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
		d, err := retime(s, q)
		if err != nil {
			return err
		}
		d.Repetend = nil
		s = d
	}
	p := s.Placement
	m := Measure(s)
	units := min(m.Makespan, MaxTextUnits, max(limit, 1))

	// Cell labels and the width every cell gets.
	width := 2
	label := func(in Instance) string {
		b := p.Blocks[in.Block]
		l := kindLetter(b.Kind)
		if len(b.Devices) > 1 {
			l = strings.ToUpper(l)
		}
		return l + strconv.Itoa(in.Micro)
	}
	grid := make([][]string, p.Devices)
	for d := range grid {
		grid[d] = make([]string, units)
	}
	// Host channels that carry offloads and reloads get rows of their
	// own under the devices.
	moves := Moves(s)
	var channels []int
	for _, mv := range moves {
		if len(channels) == 0 || channels[len(channels)-1] != mv.Channel {
			channels = append(channels, mv.Channel)
		}
	}
	hostRow := map[int]int{}
	for k, c := range channels {
		hostRow[c] = p.Devices + k
		grid = append(grid, make([]string, units))
	}
	overlap := false
	paint := func(row, start, time int, l string) {
		width = max(width, len(l))
		for t := max(start, 0); t < min(start+time, units); t++ {
			switch {
			case grid[row][t] != "":
				grid[row][t], overlap = "#", true
			case t == start:
				grid[row][t] = l
			default:
				grid[row][t] = "-"
			}
		}
	}
	for _, rr := range Reruns(s) {
		b := p.Blocks[rr.Ref.Block]
		l := "r" + strconv.Itoa(rr.Ref.Micro)
		if len(b.Devices) > 1 {
			l = "R" + strconv.Itoa(rr.Ref.Micro)
		}
		for _, d := range b.Devices {
			paint(d, rr.Start, b.Time, l)
		}
	}
	for _, mv := range moves {
		l := ">" + strconv.Itoa(mv.Ref.Micro)
		if mv.Reload {
			l = "<" + strconv.Itoa(mv.Ref.Micro)
		}
		paint(hostRow[mv.Channel], mv.Start, mv.End-mv.Start, l)
	}
	pg, partner := newPairing(s, nil), pairPartners(s)
	for _, in := range s.Instances {
		if in.Block < 0 || in.Block >= len(p.Blocks) || pg.follower(in.Ref()) {
			continue
		}
		b := p.Blocks[in.Block]
		l := label(in)
		if g, ok := partner[in.Ref()]; ok && !pg.empty() {
			l += "+b" + strconv.Itoa(g.Micro)
		}
		width = max(width, len(l))
		for _, d := range b.Devices {
			for t := max(in.Start, 0); t < min(in.Start+pg.dur(p, in.Ref()), units); t++ {
				switch {
				case grid[d][t] != "":
					grid[d][t], overlap = "#", true
				case t == in.Start:
					grid[d][t] = l
				default:
					grid[d][t] = "-"
				}
			}
		}
	}

	var out bytes.Buffer
	name := p.Name
	if name == "" {
		name = "(unnamed)"
	}
	if cellSteps > 1 {
		rm, u := Measure(real), real.Placement.Units
		fmt.Fprintf(&out, "%s: %d %s, %d micro-batches, %s, makespan %s, bubble rate %.1f%%\n",
			name, p.Devices, plural(p.Devices, "device"), s.MicroBatches, budgetText(real), u.Duration(float64(rm.Makespan)), 100*rm.BubbleRate)
		fmt.Fprintf(&out, "drawn at %s a cell: every device's order, the times rounded to cells (the figures are the schedule's)\n", u.StepText(float64(cellSteps)))
	} else {
		fmt.Fprintf(&out, "%s: %d %s, %d micro-batches, %s, makespan %d, bubble rate %.1f%%\n",
			name, p.Devices, plural(p.Devices, "device"), s.MicroBatches, budgetText(s), m.Makespan, 100*m.BubbleRate)
	}
	legend := "legend: f3/b3 forward/backward of micro-batch 3, F3/B3 on a device group, -- running on, . idle"
	if hasKind(p, placement.Input) || hasKind(p, placement.Weight) {
		legend = "legend: f3/i3/w3 forward/input gradient/weight gradient of micro-batch 3, b3 whole backward, F3 on a device group, -- running on, . idle"
	}
	if len(Reruns(s)) > 0 {
		legend += ", r3 forward of micro-batch 3 recomputed"
	}
	if len(moves) > 0 {
		legend += ", >3/<3 offload/reload of micro-batch 3 on a host channel"
	}
	if !pg.empty() {
		legend += ", f3+b1 forward of micro-batch 3 overlapped with the whole backward of 1"
	}
	if overlap {
		legend += ", # overlap"
	}
	rp := s.Repetend
	if rp != nil {
		legend += ", [==] first repetend iteration"
	}
	out.WriteString(legend + "\n")
	if rp != nil {
		fmt.Fprintf(&out, "repetend: nr %d, period %d, %d %s from time %d\n", rp.Span(), rp.Period, rp.Iterations, plural(rp.Iterations, "iteration"), rp.Start)
	}

	// The axis is in the model's time where cells are the search's steps.
	timeHead := "time"
	tick := func(t int) string { return strconv.Itoa(t) }
	if cellSteps > 1 {
		u := real.Placement.Units
		if u.Time != "" {
			timeHead = "time (" + u.Time + ")"
		}
		tick = func(t int) string {
			return strconv.FormatFloat(math.Round(u.InUnit(float64(t*cellSteps))*1e6)/1e6, 'f', -1, 64)
		}
	}
	heads := []string{timeHead, "repetend"}
	for d := range p.Devices {
		heads = append(heads, fmt.Sprintf("dev %d", d))
	}
	for _, c := range channels {
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

	for d := range grid {
		head := fmt.Sprintf("dev %d", d)
		if d >= p.Devices {
			head = fmt.Sprintf("host %d", channels[d-p.Devices])
		}
		row := fmt.Sprintf("%-*s", lead, head)
		var line strings.Builder
		line.WriteString(row)
		for t := range units {
			c := grid[d][t]
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

	if rp != nil {
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
	switch {
	case m.Makespan > units && cellSteps > 1:
		fmt.Fprintf(&out, "(cut: %d more cells not shown)\n", m.Makespan-units)
	case m.Makespan > units:
		fmt.Fprintf(&out, "(cut: %d more time units not shown, makespan %d)\n", m.Makespan-units, m.Makespan)
	}
	_, err := w.Write(out.Bytes())
	return err
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
func budgetText(s *Schedule) string {
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

// checkRenderable rejects what no rendering can draw: no schedule, no
// placement or an invalid one. Anything else (even an invalid schedule) is
// drawn as it is.
func checkRenderable(s *Schedule) error {
	if s == nil || s.Placement == nil {
		return fmt.Errorf("render: no placement")
	}
	if err := s.Placement.Validate(); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return nil
}
