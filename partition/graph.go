// Package partition cuts a model into pipeline stages: it finds the split
// of a layer or operator graph onto k accelerators and ℓ CPU cores with the
// least maximum load (time per sample) under a per-accelerator memory cap,
// after Tarnawski et al., "Efficient Algorithms for Device Placement of DNN
// Graph Operators" (NeurIPS 2020):
//
//   - contiguous splits by the dynamic program over the graph's ideals
//     (§5.1.1), with the paper's preprocessing (colour classes and strongly
//     connected components contracted, idle units merged as its published
//     code does) and its training variant (§5.3 and appendix B: the DP runs
//     on the forward part, a layer's backward on its forward's device);
//   - non-contiguous splits by the max-load integer program (Fig. 6),
//     solved with Z3 through package smt, anytime: the best split found
//     within the caller's context and its proven gap;
//   - the baselines a user compares against: an even split by layer count,
//     a greedy fill, and given (expert) splits.
//
// It reads the JSON graphs of Tarnawski et al.'s published set and
// tessel's own layer profiles, and turns a split into a placement
// (package placement) that the schedule search reads. It does not schedule: the max load is the steady-state
// time per sample of any pipeline schedule without bubbles; finding one is
// the search's job.
package partition

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/profile"
	"github.com/tessel-pp/tessel/quantity"
)

// Node is one operator or layer of the graph (the paper's v ∈ V).
type Node struct {
	Name string
	// Acc and CPU are its processing times on an accelerator and on a CPU
	// core (p_acc, p_cpu). Acc is +Inf where the node cannot run on an
	// accelerator.
	Acc, CPU float64
	// Size is the accelerator memory it needs (m_v: weights and
	// activations), in the unit of Graph.Memory.
	Size float64
	// Comm is c_v, the time to move its output between an accelerator and
	// host memory, paid when the node and a successor are on different
	// devices (once by the sender, once by every receiving device).
	Comm float64
	// Backward marks the nodes of the backward pass (training graphs).
	Backward bool
	// Class is its colour class: nodes of one class share a device. -1 is
	// a class of its own.
	Class int
	// Input and Weight split a backward node's time for the placement (the
	// zero-bubble "I" and "W"); both 0 when the profile does not split it.
	Input, Weight float64
	// Layer is the profile layer the node comes from (-1 for graphs of the published set).
	Layer int
	// FLOPs and MemoryAccess are the node's floating-point operations and
	// bytes moved to and from device memory per sample (the profile's
	// "flops" and "memory_access"; 0: not given): its time on a device
	// with a peak FLOP rate and memory bandwidth is the roofline's
	// (Wu et al., eqs 1–2).
	FLOPs, MemoryAccess float64
	// TypeTimes is the node's time per device type (the profile's
	// "device_times"); nil: not given.
	TypeTimes map[string]float64
}

// Graph is a model to split (the paper's DAG G = (V, E) with its weights)
// and the devices to split it onto.
type Graph struct {
	Name  string
	Nodes []Node
	Edges [][2]int // node indices, From → To
	// Accelerators (k) and CPUs (ℓ) to split onto.
	Accelerators, CPUs int
	// Memory is the cap M of one accelerator; 0 means unlimited.
	Memory float64
	// IDs are the graph file's node ids (nil for profiles).
	IDs []int
	// Activations is, per node, the memory of one micro-batch's stashed
	// activations (profiles only), for the placement's block memory.
	Activations []float64
	// Static is, per node, the memory its device holds for good
	// (parameters, gradients, optimizer state), and Checkpoints what a
	// recomputed micro-batch keeps of its activations (profiles only).
	Static, Checkpoints []float64
	// Bytes: Memory, Activations, Static and Checkpoints are in bytes
	// (the profile's "device_bytes" and byte fields).
	Bytes bool
	// HostBandwidth is the bytes moved to or from host memory per unit
	// of time (0: none given).
	HostBandwidth float64
	// OutputSizes and GradSizes are, per forward node of a profile, the
	// size of its output (what a pipeline stage sends and tensor
	// parallelism all-reduces) and of its gradients (what data
	// parallelism all-reduces), in the cluster links' unit of size
	// (profiles only; "output_size", default 1, and "grad_size", default
	// the parameters).
	OutputSizes, GradSizes []float64
	// TimeUnit is the unit of the profile's times (its "time_unit": s,
	// ms, us or ns; package quantity), "" where the profile states none: its
	// times are then in a unit of its own. A cluster's times and rates
	// are converted to it.
	TimeUnit string
	// MemoryUnit is the unit of "params", "activations" and "memory"
	// (the profile's "memory_unit": B, kB, MB, GB, KiB, MiB, GiB, …), ""
	// where the profile states none; a profile in bytes states none.
	MemoryUnit string
	// Profile says how a measured profile's times were taken (its
	// "profile" object; nil otherwise), Calibration what a measured run
	// corrected in them (already applied to the nodes' times and comms),
	// and Spreads, per layer, the spread of each pass's time as measured
	// (nil where none is given).
	Profile     *profile.Meta
	Calibration *profile.Calibration
	Spreads     []profile.Spread
	// ActionOverhead is the time every block of a placement made from
	// the graph takes beside its layers' (the calibration's time per
	// action of the runtime; 0 without one).
	ActionOverhead float64
}

// FormatTime writes x, a time in the graph's unit: "69.00 ms" (package
// quantity) where the graph names its unit, "69.00" where it names none.
func (g *Graph) FormatTime(x float64) string {
	if sec, ok := quantity.TimeSeconds(g.TimeUnit); ok {
		return quantity.Seconds(x * sec)
	}
	return fmt.Sprintf("%.2f", x)
}

// FormatStep writes a step x in the graph's time: "2 µs" in a named unit,
// "0.002" where the graph names none (the shortest form that reads back).
func (g *Graph) FormatStep(x float64) string {
	if sec, ok := quantity.TimeSeconds(g.TimeUnit); ok {
		return quantity.Step(x * sec)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// MemoryUnitBytes is the bytes of one unit of the graph's memory: 1 for a
// profile in bytes, its memory unit's size, 0 where it has none.
func (g *Graph) MemoryUnitBytes() float64 {
	if g.Bytes {
		return 1
	}
	b, _ := quantity.MemoryBytes(g.MemoryUnit)
	return b
}

// Training reports whether the graph has a backward pass.
func (g *Graph) Training() bool {
	for _, v := range g.Nodes {
		if v.Backward {
			return true
		}
	}
	return false
}

// Validate checks what the algorithms rely on: at least one node and one
// device, finite non-negative weights (Acc may be +Inf), edges between
// existing distinct nodes, no repeated edge, and no cycle.
func (g *Graph) Validate() error {
	if len(g.Nodes) == 0 {
		return fmt.Errorf("no nodes")
	}
	if g.Accelerators < 0 || g.CPUs < 0 {
		return fmt.Errorf("negative device count (%d accelerators, %d CPUs)", g.Accelerators, g.CPUs)
	}
	if g.Accelerators+g.CPUs == 0 {
		return fmt.Errorf("no devices: want at least one accelerator or CPU")
	}
	if err := limits.Check("accelerators", g.Accelerators, limits.Devices); err != nil {
		return err
	}
	if err := limits.Check("CPUs", g.CPUs, limits.Devices); err != nil {
		return err
	}
	if g.Memory < 0 || math.IsNaN(g.Memory) || math.IsInf(g.Memory, 0) {
		return fmt.Errorf("memory cap %v: want a finite number ≥ 0", g.Memory)
	}
	for i, v := range g.Nodes {
		for _, w := range []struct {
			name string
			x    float64
			inf  bool
		}{{"accelerator time", v.Acc, true}, {"CPU time", v.CPU, false}, {"size", v.Size, false}, {"communication cost", v.Comm, false}} {
			if w.x < 0 || math.IsNaN(w.x) || (math.IsInf(w.x, 1) && !w.inf) {
				return fmt.Errorf("node %s: %s %v: want a finite number ≥ 0", g.nodeName(i), w.name, w.x)
			}
		}
	}
	seen := make(map[[2]int]bool, len(g.Edges))
	for n, e := range g.Edges {
		for _, x := range e {
			if x < 0 || x >= len(g.Nodes) {
				return fmt.Errorf("edge %d: node index %d out of range", n, x)
			}
		}
		if e[0] == e[1] {
			return fmt.Errorf("edge %s -> %s: a node cannot depend on itself", g.nodeName(e[0]), g.nodeName(e[1]))
		}
		if seen[e] {
			return fmt.Errorf("edge %s -> %s given twice", g.nodeName(e[0]), g.nodeName(e[1]))
		}
		seen[e] = true
	}
	if c := g.cycle(); c != nil {
		s := g.nodeName(c[0])
		for _, v := range c[1:] {
			s += " -> " + g.nodeName(v)
		}
		return fmt.Errorf("cycle %s", s)
	}
	return nil
}

func (g *Graph) nodeName(i int) string {
	if g.IDs != nil {
		return fmt.Sprintf("%d", g.IDs[i])
	}
	if g.Nodes[i].Name != "" {
		return fmt.Sprintf("%q", g.Nodes[i].Name)
	}
	return fmt.Sprintf("#%d", i)
}

// succ returns the successor lists.
func (g *Graph) succ() [][]int {
	s := make([][]int, len(g.Nodes))
	for _, e := range g.Edges {
		s[e[0]] = append(s[e[0]], e[1])
	}
	return s
}

// cycle returns the nodes of one cycle, the first repeated at the end, or
// nil.
func (g *Graph) cycle() []int {
	succ := g.succ()
	state := make([]int8, len(g.Nodes)) // 0 new, 1 on stack, 2 done
	parent := make([]int, len(g.Nodes))
	type frame struct{ v, next int }
	for r := range g.Nodes {
		if state[r] != 0 {
			continue
		}
		stack := []frame{{r, 0}}
		state[r] = 1
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(succ[f.v]) {
				state[f.v] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			w := succ[f.v][f.next]
			f.next++
			switch state[w] {
			case 0:
				state[w] = 1
				parent[w] = f.v
				stack = append(stack, frame{w, 0})
			case 1:
				c := []int{w}
				for x := f.v; x != w; x = parent[x] {
					c = append(c, x)
				}
				c = append(c, w)
				// reverse to follow the edges
				for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
					c[i], c[j] = c[j], c[i]
				}
				return c
			}
		}
	}
	return nil
}

// topo returns the nodes in a topological order, ties by index.
func topo(n int, succ [][]int) []int {
	indeg := make([]int, n)
	for _, ws := range succ {
		for _, w := range ws {
			indeg[w]++
		}
	}
	// A simple heap-free Kahn's with a sorted frontier keeps the order
	// deterministic; graphs are small.
	var order []int
	ready := []int{}
	for v := range n {
		if indeg[v] == 0 {
			ready = append(ready, v)
		}
	}
	for len(ready) > 0 {
		// smallest index first
		m := 0
		for i := range ready {
			if ready[i] < ready[m] {
				m = i
			}
		}
		v := ready[m]
		ready = append(ready[:m], ready[m+1:]...)
		order = append(order, v)
		for _, w := range succ[v] {
			indeg[w]--
			if indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	return order
}
