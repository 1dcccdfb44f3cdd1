package partition

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// names shortens a stage's node list for the terminal.
func names(ns []string) string {
	if len(ns) == 0 {
		return "(empty stage)"
	}
	if len(ns) <= 4 {
		return strings.Join(ns, " ")
	}
	return fmt.Sprintf("%s %s … %s (%d)", ns[0], ns[1], ns[len(ns)-1], len(ns))
}

// WriteText prints the report for people: the stages, the max load
// beside a single device's and every baseline's, and the placement.
func (res *Report) WriteText(w io.Writer) {
	kind := "inference"
	if res.Training {
		kind = "training (a layer's forward and backward on one device)"
	}
	bytes := res.Graph != nil && res.Graph.Bytes
	cap := "none"
	if res.MemoryCap > 0 {
		cap = fmt.Sprintf("%g", res.MemoryCap)
		if bytes {
			cap = FormatMemory(res.MemoryCap, true)
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
	fmt.Fprintf(w, "%-6s %-9s %10s %10s %10s %10s %10s %12s  %s\n", "stage", "device", "load", "compute", "comm", "forward", "backward", "memory", "layers")
	for _, st := range res.Stages {
		dev := fmt.Sprint(st.Device)
		if st.CPU {
			dev += " (cpu)"
		}
		mem := fmt.Sprintf("%.4g", st.Memory)
		if bytes {
			mem = FormatMemory(st.Memory, true)
		}
		fmt.Fprintf(w, "%-6d %-9s %10.2f %10.2f %10.2f %10.2f %10.2f %12s  %s\n", st.Stage, dev, st.Load, st.Compute, st.Comm, st.Forward, st.Backward, mem, names(st.Nodes))
	}
	fmt.Fprintf(w, "\nmax load       %.2f per sample (the time per sample of a pipeline without bubbles)\n", res.MaxLoad)
	fmt.Fprintf(w, "single device  %.2f (%.2f× the max load)\n", res.SingleDevice, res.SingleDevice/math.Max(res.MaxLoad, 1e-300))
	if res.IP != nil {
		status := "proven optimal"
		if !res.IP.Proven {
			status = fmt.Sprintf("not proven: lower bound %.2f, gap %.1f%% (time limit)", res.IP.LowerBound, 100*res.IP.Gap)
		}
		fmt.Fprintf(w, "IP             %s, %d solver calls, contiguous: %s\n", status, res.IP.Checks, yesNo(res.Contiguous))
	}
	fmt.Fprintf(w, "ideals         %d\n", res.Ideals)
	fmt.Fprintf(w, "time           %v\n\n", time.Duration(res.Seconds*float64(time.Second)).Round(time.Microsecond))
	fmt.Fprintf(w, "%-8s %10s %8s %5s %11s\n", "split", "max load", "vs best", "fits", "contiguous")
	for _, b := range res.Baselines {
		fmt.Fprintf(w, "%-8s %10.2f %7.2f× %5s %11s\n", b.Method, b.MaxLoad, b.MaxLoad/math.Max(res.MaxLoad, 1e-300), yesNo(b.Fits), yesNo(b.Contiguous))
	}
	p := res.Placement
	fmt.Fprintf(w, "\nplacement      %d devices, %d blocks, time unit %.4g (rounding moves a block by up to %.1f%% of the max load, the max load by %.1f%%)\n",
		p.Devices, p.Blocks, p.TimeUnit, 100*p.RoundingError, 100*p.MaxLoadError)
	if p.File != "" {
		fmt.Fprintf(w, "written        %s (tessel search --placement-file %s)\n", p.File, p.File)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
