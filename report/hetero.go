package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/partition"
)

// Hetero writes tessel partition --cluster's report of r: the split, the
// speed-oblivious splits beside it and how much longer they take on the
// cluster.
func Hetero(w io.Writer, r *hetero.Report) {
	kind := "inference"
	if r.Training {
		kind = "training"
	}
	g := r.Graph
	if g == nil {
		g = &partition.Graph{}
	}
	u := unitSuffix(g)
	fmt.Fprintf(w, "tessel partition: %s on a cluster of %d devices, %s\n", r.Model, r.Devices, kind)
	fmt.Fprintf(w, "method: contiguous split and device order by dynamic programming, each stage's time on its device (docs/heterogeneous.md)\n\n")
	heteroStages(w, r.Split, g.Bytes, u)
	exact := "proven the least"
	if !r.Exact {
		exact = "not proven the least: links differ within device classes"
	}
	fmt.Fprintf(w, "\nmax load       %s per sample on the cluster, the largest device or link load (%s)\n", g.FormatTime(r.Split.MaxLoad), exact)
	fmt.Fprintf(w, "device order   %s\n\n", textfmt.Ints(r.Split.Order()))
	n := 10
	if u != "" {
		n = 14
	}
	fmt.Fprintf(w, "%-10s %*s %8s %5s  %s\n", "split", n, "max load"+u, "vs best", "fits", "layers per stage")
	for _, s := range []*hetero.Split{r.Split, r.Oblivious, r.Even} {
		if s == nil {
			continue
		}
		var counts []string
		for _, st := range s.Stages {
			counts = append(counts, fmt.Sprint(st.To-st.From))
		}
		fmt.Fprintf(w, "%-10s %*.2f %7.2f× %5s  %s\n", s.Method, n, s.MaxLoad, s.MaxLoad/math.Max(r.Split.MaxLoad, 1e-300), textfmt.YesNo(s.Fits), strings.Join(counts, " "))
	}
	if c := r.Converted; c != nil {
		fmt.Fprintf(w, "\nplacement      %d devices, %d blocks, %s a step, the search's step %s (rounding moves a block by up to %.2f%% of the max load, the max load by %.2f%%)\n",
			c.Placement.Devices, len(c.Placement.Blocks), g.FormatStep(c.TimeUnit), g.FormatStep(c.SearchUnit), 100*c.RoundingError, 100*c.MaxLoadError)
	}
}

// heteroStages writes the stages of s; u is the unit of the time columns'
// headers (" (ms)", or "").
func heteroStages(w io.Writer, s *hetero.Split, bytes bool, u string) {
	n := 10 // the width of a time column, wider for a header with a unit
	if u != "" {
		n = 14
	}
	fmt.Fprintf(w, "%-6s %-7s %*s %*s %*s %*s %12s  %s\n", "stage", "device", n, "load"+u, n, "compute"+u, n, "transfer"+u, n, "link out"+u, "memory", "layers")
	for i, st := range s.Stages {
		mem := fmt.Sprintf("%.4g", st.Memory)
		if bytes {
			mem = partition.FormatMemory(st.Memory, true)
		}
		fmt.Fprintf(w, "%-6d %-7d %*.2f %*.2f %*.2f %*.2f %12s  %s\n", i, st.Device, n, st.Load, n, st.Compute, n, st.Transfer, n, st.Link, mem, shortLayers(st.Layers, ""))
	}
}

// shortLayers shortens a stage's layer names for the terminal: the first
// two, the last and how many (the count followed by what, where given).
func shortLayers(ns []string, what string) string {
	if len(ns) <= 4 {
		return strings.Join(ns, " ")
	}
	return fmt.Sprintf("%s %s … %s (%d%s)", ns[0], ns[1], ns[len(ns)-1], len(ns), what)
}
