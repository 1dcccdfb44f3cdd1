package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/megatron"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// MegatronImport writes tessel import --megatron-layout's report: the
// layout l as Megatron-Core prints it, a line about its placement p and,
// where Megatron-Core's order s was made (nil: none), a line about it
// (group size g, 0 for the pipeline size).
func MegatronImport(w io.Writer, l *megatron.Layout, p *placement.Placement, s *schedule.Schedule, g int) error {
	var b strings.Builder
	megatronLayout(&b, l)
	b.WriteString(megatronPlacement(l, p))
	if s != nil {
		b.WriteString(megatronOrder(s, g))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// megatronLayout writes l as Megatron-Core's pretty_repr does: one row per
// pipeline rank, one column per virtual stage, each stage's layers
// ("(empty stage)" for none).
func megatronLayout(w io.StringWriter, l *megatron.Layout) {
	names := map[byte]string{'E': "embedding", 't': "decoder", 'm': "mtp", 'L': "loss"}
	cell := func(st string) string {
		if st == "" {
			return "(empty stage)"
		}
		var parts []string
		for i := 0; i < len(st); {
			j := i
			for j < len(st) && st[j] == st[i] {
				j++
			}
			part := names[st[i]]
			if j-i > 1 {
				part += "*" + strconv.Itoa(j-i)
			}
			parts = append(parts, part)
			i = j
		}
		return strings.Join(parts, ",")
	}
	rows := [][]string{{""}}
	for v := range l.VPP {
		rows[0] = append(rows[0], "virtual stage "+strconv.Itoa(v))
	}
	for r := range l.PP {
		row := []string{"rank " + strconv.Itoa(r)}
		for v := range l.VPP {
			row = append(row, cell(l.Stages[v*l.PP+r]))
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			if i < len(row)-1 {
				c += strings.Repeat(" ", widths[i]-len(c))
			}
			b.WriteString(c)
		}
		w.WriteString(b.String() + "\n")
	}
}

// megatronPlacement is the line tessel import prints about the layout l
// and its placement p.
func megatronPlacement(l *megatron.Layout, p *placement.Placement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "placement %s: %d ranks, %d stages (%d per rank), %d transformer layers", p.Name, l.PP, len(l.Stages), l.VPP, l.Layers)
	if l.MTP > 0 {
		fmt.Fprintf(&b, ", %d MTP layers", l.MTP)
	}
	if e := l.Empty(); len(e) > 0 {
		parts := make([]string, len(e))
		for i, s := range e {
			parts[i] = strconv.Itoa(s)
		}
		fmt.Fprintf(&b, "; stages without a transformer layer: %s", strings.Join(parts, ", "))
	}
	return b.String() + "\n"
}

// megatronOrder is the line tessel import prints about Megatron-Core's
// order s (group size g, 0 for the pipeline size).
func megatronOrder(s *schedule.Schedule, g int) string {
	m := schedule.Measure(s)
	if g == 0 {
		g = s.Placement.Devices
	}
	return fmt.Sprintf("Megatron-Core's order of %d micro-batches (groups of %d): makespan %d, bubble rate %.2f%%, peak memory %v, verified\n",
		s.MicroBatches, g, m.Makespan, 100*m.BubbleRate, m.PeakMemory)
}
