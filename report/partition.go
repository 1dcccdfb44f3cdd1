package report

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/partition"
)

// Partition writes tessel partition's report of res: the stages, the max
// load beside a single device's and every baseline's, and the placement.
func Partition(w io.Writer, res *partition.Report) {
	kind := "inference"
	if res.Training {
		kind = "training (a layer's forward and backward on one device)"
	}
	bytes := res.Graph != nil && res.Graph.Bytes
	cap := "none"
	if res.MemoryCap > 0 {
		cap = fmt.Sprintf("%g", res.MemoryCap)
		if bytes {
			cap = partition.FormatMemory(res.MemoryCap, true)
		}
	}
	method := "contiguous split by the DP over ideals (Tarnawski et al., §5.1.1)"
	switch res.Method {
	case "ip":
		method = "any split by the max-load integer program (Tarnawski et al., Fig. 6), Z3"
	case "cluster":
		method = "contiguous split and device order on a cluster, each stage's time on its device (docs/heterogeneous.md)"
	}
	fmt.Fprintf(w, "tessel partition: %s, %d accelerators, %d CPUs, memory cap %s, %s\n", res.Model, res.Accelerators, res.CPUs, cap, kind)
	fmt.Fprintf(w, "method: %s\n\n", method)
	u := unitSuffix(res.Graph)
	n := 10 // the width of a time column, wider for a header with a unit
	if u != "" {
		n = 14
	}
	fmt.Fprintf(w, "%-6s %-9s %*s %*s %*s %*s %*s %12s  %s\n", "stage", "device", n, "load"+u, n, "compute"+u, n, "comm"+u, n, "forward"+u, n, "backward"+u, "memory", "layers")
	for _, st := range res.Stages {
		dev := fmt.Sprint(st.Device)
		if st.CPU {
			dev += " (cpu)"
		}
		mem := fmt.Sprintf("%.4g", st.Memory)
		if bytes {
			mem = partition.FormatMemory(st.Memory, true)
		}
		fmt.Fprintf(w, "%-6d %-9s %*.2f %*.2f %*.2f %*.2f %*.2f %12s  %s\n", st.Stage, dev, n, st.Load, n, st.Compute, n, st.Comm, n, st.Forward, n, st.Backward, mem, stageNames(st.Nodes))
	}
	g := res.Graph
	if g == nil {
		g = &partition.Graph{}
	}
	mt := g.FormatTime
	fmt.Fprintf(w, "\nmax load       %s per sample (the time per sample of a pipeline without bubbles)\n", mt(res.MaxLoad))
	fmt.Fprintf(w, "single device  %s (%.2f× the max load)\n", mt(res.SingleDevice), res.SingleDevice/math.Max(res.MaxLoad, 1e-300))
	if res.IP != nil {
		status := "proven optimal"
		if !res.IP.Proven {
			status = fmt.Sprintf("not proven: lower bound %.2f, gap %.1f%% (time limit)", res.IP.LowerBound, 100*res.IP.Gap)
		}
		fmt.Fprintf(w, "IP             %s, %d solver calls, contiguous: %s\n", status, res.IP.Checks, textfmt.YesNo(res.Contiguous))
	}
	fmt.Fprintf(w, "ideals         %d\n", res.Ideals)
	fmt.Fprintf(w, "time           %v\n\n", time.Duration(res.Seconds*float64(time.Second)).Round(time.Microsecond))
	fmt.Fprintf(w, "%-8s %*s %8s %5s %11s\n", "split", n, "max load"+u, "vs best", "fits", "contiguous")
	for _, b := range res.Baselines {
		fmt.Fprintf(w, "%-8s %*.2f %7.2f× %5s %11s\n", b.Method, n, b.MaxLoad, b.MaxLoad/math.Max(res.MaxLoad, 1e-300), textfmt.YesNo(b.Fits), textfmt.YesNo(b.Contiguous))
	}
	p := res.Placement
	fmt.Fprintf(w, "\nplacement      %d devices, %d blocks, %s a step, the search's step %s (rounding moves a block by up to %.2f%% of the max load, the max load by %.2f%%)\n",
		p.Devices, p.Blocks, g.FormatStep(p.TimeUnit), g.FormatStep(p.SearchUnit), 100*p.RoundingError, 100*p.MaxLoadError)
	if p.File != "" {
		fmt.Fprintf(w, "written        %s (tessel search --placement-file %s)\n", p.File, p.File)
	}
}

// SampleLatency writes tessel partition --objective latency's report of
// res: the subgraphs of the best split with their times, the latency and
// its gap, and Table 4's columns.
func SampleLatency(w io.Writer, res *partition.SampleLatencyReport) {
	cap := "none"
	if res.MemoryCap > 0 {
		cap = fmt.Sprintf("%g", res.MemoryCap)
	}
	fmt.Fprintf(w, "tessel partition: %s, %d accelerators, %d CPUs, memory cap %s, inference, objective latency\n", res.Model, res.Accelerators, res.CPUs, cap)
	if res.Subgraphs > 1 {
		fmt.Fprintf(w, "method: up to %d contiguous subgraphs per accelerator by the latency integer program (Tarnawski et al., §4.1, Fig. 4), Z3\n\n", res.Subgraphs)
	} else {
		fmt.Fprintf(w, "method: contiguous split by the latency integer program (Tarnawski et al., §4, Fig. 3), Z3\n\n")
	}
	fmt.Fprintf(w, "%-8s %-6s %10s %10s %10s %10s %10s %12s  %s\n", "device", "piece", "start", "finish", "comm in", "compute", "comm out", "memory", "nodes")
	for _, st := range res.Steps {
		fmt.Fprintf(w, "%-8d %-6d %10.2f %10.2f %10.2f %10.2f %10.2f %12.4g  %s\n", st.Device, st.Piece, st.Start, st.Finish, st.CommIn, st.Compute, st.CommOut, st.Memory, stageNames(st.Nodes))
	}
	if len(res.CPUNodes) > 0 {
		fmt.Fprintf(w, "%-8s %-6s %10s %10s %10s %10s %10s %12s  %s\n", "cpu", "", "", "", "", "", "", "", stageNames(res.CPUNodes))
	}
	fmt.Fprintf(w, "\nlatency        %.2f per sample (one input at a time, from its arrival to its last output)\n", res.Latency)
	status := "proven optimal by Z3"
	if res.ProvenBy == "relaxation" {
		status = "proven optimal by the path relaxation"
	}
	if !res.Proven {
		status = "not proven (time limit)"
	}
	fmt.Fprintf(w, "lower bound    %.2f, gap %.1f%%, %s, %d solver calls\n", res.LowerBound, 100*res.Gap, status, res.Checks)
	found := "by Z3"
	switch res.Found {
	case "ip":
	case "chain":
		found = "by the interval split of least transfer and compute time (before Z3)"
	case "local search":
		found = "by the local search (single moves, before Z3)"
	default:
		found = "the " + res.Found + " split: nothing better found"
	}
	fmt.Fprintf(w, "found          %s\n", found)
	fmt.Fprintf(w, "time           %v\n\n", time.Duration(res.Seconds*float64(time.Second)).Round(time.Microsecond))
	fmt.Fprintf(w, "%-12s %10s %10s %5s %11s\n", "split", "latency", "max load", "fits", "contiguous")
	for _, b := range res.Baselines {
		fmt.Fprintf(w, "%-12s %10.2f %10.2f %5s %11s\n", b.Method, b.Latency, b.MaxLoad, textfmt.YesNo(b.Fits), textfmt.YesNo(b.Contiguous))
	}
}

// MegatronArgs writes tessel partition --format megatron-layout's report
// of ml, the Megatron-Core arguments of the layout: the layout and, where
// the split has it, the simpler form.
func MegatronArgs(w io.Writer, ml *partition.MegatronLayout) {
	fmt.Fprintf(w, "--pipeline-model-parallel-size %d --pipeline-model-parallel-layout \"%s\"\n", ml.Ranks, ml.Layout)
	if ml.Simple {
		fmt.Fprintf(w, "--num-layers %d --decoder-first-pipeline-num-layers %d --decoder-last-pipeline-num-layers %d\n", ml.Layers, ml.First, ml.Last)
		return
	}
	fmt.Fprintf(w, "no --decoder-first/last-pipeline-num-layers form: %s\n", ml.Why)
}

// memoryTable writes each device's memory as a table between blank lines:
// its capacity, what its stages hold for good, what is left for
// activations, one micro-batch's largest activation there, and the budget
// of the schedule in placement units; in GB or MB where bytes is set.
func memoryTable(w io.Writer, mem []partition.DeviceMemory, bytes bool) {
	f := func(x float64) string { return partition.FormatMemory(x, bytes) }
	fmt.Fprintf(w, "\n%-7s %10s %14s %14s %16s %12s %s\n", "device", "capacity", "held for good", "left", "one micro-batch", "unit", "budget (units)")
	for _, m := range mem {
		fmt.Fprintf(w, "%-7d %10s %14s %14s %16s %12s %d\n", m.Device, f(m.Capacity), f(m.Static), f(m.Free), f(m.Activation), f(m.Unit), m.Budget)
	}
	fmt.Fprintln(w)
}

// stageNames shortens a stage's node list for the terminal.
func stageNames(ns []string) string {
	if len(ns) == 0 {
		return "(empty stage)"
	}
	return shortLayers(ns, "")
}

// unitSuffix is " (ms)" for a table's column of times in the graph's unit,
// "" where it names none (g may be nil).
func unitSuffix(g *partition.Graph) string {
	if g == nil || g.TimeUnit == "" {
		return ""
	}
	return " (" + g.TimeUnit + ")"
}
