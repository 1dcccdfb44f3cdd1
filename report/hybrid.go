package report

import (
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/hybrid"
	"github.com/tessel-pp/tessel/internal/textfmt"
)

// Hybrid writes tessel plan --parallel auto's report of r: the best
// layouts ranked (at most top; 0: all), with where their time goes,
// Megatron's layout as the baseline row, the pruned layouts counted by
// reason and the best layout's stages.
func Hybrid(w io.Writer, r *hybrid.Result, top int) {
	if r.Unit != "" {
		fmt.Fprintf(w, "tessel plan --parallel auto: %s on %d devices, %d samples per iteration, times in %s (time unit %.4g)\n",
			r.Model, r.Devices, r.MicroBatches, r.Unit, r.TimeUnit)
	} else {
		fmt.Fprintf(w, "tessel plan --parallel auto: %s on %d devices, %d samples per iteration, time unit %.4g\n",
			r.Model, r.Devices, r.MicroBatches, r.TimeUnit)
	}
	fmt.Fprintf(w, "layouts      %d evaluated, %d pruned (%s)\n\n", len(r.Plans), len(r.Pruned), hybrid.PrunedText(r.PrunedBy))
	chunks := len(r.ChunksTried) > 0
	if chunks {
		fmt.Fprintf(w, "%-9s %3s %3s %3s %5s %4s %6s %11s %8s %11s %11s %10s %10s %10s %10s  %s\n",
			"rank", "dp", "tp", "pp", "mb", "size", "chunks", "time", "vs best", "pipeline", "compute", "tp comm", "transfer", "bubble", "dp exposed", "schedule")
	} else {
		fmt.Fprintf(w, "%-9s %3s %3s %3s %5s %4s %11s %8s %11s %11s %10s %10s %10s %10s  %s\n",
			"rank", "dp", "tp", "pp", "mb", "size", "time", "vs best", "pipeline", "compute", "tp comm", "transfer", "bubble", "dp exposed", "schedule")
	}
	if r.Unit != "" {
		// The cells' unit under their names, so that every time in the
		// table carries it (the counts and the ratio have none).
		u := r.Unit
		if chunks {
			fmt.Fprintf(w, "%-9s %3s %3s %3s %5s %4s %6s %11s %8s %11s %11s %10s %10s %10s %10s\n",
				"", "", "", "", "", "", "", u, "", u, u, u, u, u, u)
		} else {
			fmt.Fprintf(w, "%-9s %3s %3s %3s %5s %4s %11s %8s %11s %11s %10s %10s %10s %10s\n",
				"", "", "", "", "", "", u, "", u, u, u, u, u, u)
		}
	}
	row := func(name string, l *hybrid.Layout) {
		if chunks {
			fmt.Fprintf(w, "%-9s %3d %3d %3d %5d %4d %6d %11.2f %7.2f× %11.2f %11.2f %10.2f %10.2f %10.2f %10.2f  %s\n", name, l.DP, l.TP, l.PP, l.MicroBatches,
				l.MicroBatchSize, l.Chunks, l.Time, l.Time/r.Best.Time, l.Pipeline, l.Breakdown.Compute, l.Breakdown.TPComm, l.Breakdown.Transfer, l.Breakdown.Bubble, l.Breakdown.DPExposed, l.Schedule)
			return
		}
		fmt.Fprintf(w, "%-9s %3d %3d %3d %5d %4d %11.2f %7.2f× %11.2f %11.2f %10.2f %10.2f %10.2f %10.2f  %s\n", name, l.DP, l.TP, l.PP, l.MicroBatches,
			l.MicroBatchSize, l.Time, l.Time/r.Best.Time, l.Pipeline, l.Breakdown.Compute, l.Breakdown.TPComm, l.Breakdown.Transfer, l.Breakdown.Bubble, l.Breakdown.DPExposed, l.Schedule)
	}
	for i := range r.Plans {
		if top > 0 && i >= top {
			fmt.Fprintf(w, "... %d more (--json lists every layout)\n", len(r.Plans)-top)
			break
		}
		row(fmt.Sprint(i+1), &r.Plans[i])
	}
	if r.Baseline != nil {
		row("megatron", r.Baseline)
	} else {
		fmt.Fprintf(w, "megatron  (no layout with tensor parallelism within a node fits)\n")
	}
	b := r.Best
	unit := ""
	if r.Unit != "" {
		unit = " " + r.Unit
	}
	fmt.Fprintf(w, "\nbest         dp %d × tp %d × pp %d, %d micro-batches of %d per replica, %.2f%s per iteration", b.DP, b.TP, b.PP, b.MicroBatches, b.MicroBatchSize, b.Time, unit)
	if chunks {
		fmt.Fprintf(w, ", %d stage%s per device", b.Chunks, map[bool]string{true: "s"}[b.Chunks != 1])
	}
	if r.Baseline != nil {
		fmt.Fprintf(w, " (Megatron's layout: %.2f%s, %.2f× slower)", r.Baseline.Time, unit, r.Baseline.Time/b.Time)
	}
	fmt.Fprintln(w)
	for i, st := range b.Stages {
		fmt.Fprintf(w, "stage %-6d devices %-14s %s\n", i, textfmt.Ints(b.Groups[i]), shortLayers(st, " layers"))
	}
}
