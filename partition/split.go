package partition

import (
	"fmt"
	"math"
	"sort"
)

// Stage is the part of the model on one device, with its load per sample.
type Stage struct {
	// Device is 0..k-1 for accelerators and k..k+ℓ-1 for CPU cores.
	Device int
	CPU    bool
	Nodes  []int // node indices, in the graph's order
	// Load = Compute + Comm: the device's time per sample (the paper's
	// acc(S) or cpu(S)). Comm is the transfer time to and from host memory
	// (accelerators only).
	Load, Compute, Comm float64
	// ForwardLoad and BackwardLoad split Load by pass (training graphs);
	// a transfer counts toward the pass of the node on this device.
	ForwardLoad, BackwardLoad float64
	// Memory is Σ size of its nodes (checked against the cap on
	// accelerators).
	Memory float64
}

// Split is every node of a graph on one device, with the loads.
type Split struct {
	Graph  *Graph
	Device []int // per node
	// Stages lists the non-empty devices in pipeline order: a topological
	// order of the stages when the split is contiguous.
	Stages []Stage
	// MaxLoad is the largest stage load: the time per sample of the
	// pipeline (§5.1).
	MaxLoad float64
	// Contiguous reports whether every stage holds a contiguous set of
	// forward nodes and one of backward nodes (Definition 3.1, separately
	// per pass as §5.3 asks).
	Contiguous bool
	// OverMemory lists the accelerators whose memory exceeds the cap.
	OverMemory []int
	// Colocated reports whether every colour class is on one device.
	Colocated bool
}

// NewSplit computes the loads of the split that puts node v on dev[v]
// (0..k-1 accelerators, k..k+ℓ-1 CPU cores). A node that cannot run on an
// accelerator but is put on one gives an infinite load.
func NewSplit(g *Graph, dev []int) (*Split, error) { return newSplit(g, dev, nil) }

// newSplit is NewSplit keeping the devices of keep as stages even where
// they hold no node (empty stages); they come last, in device order.
func newSplit(g *Graph, dev []int, keep map[int]bool) (*Split, error) {
	if len(dev) != len(g.Nodes) {
		return nil, fmt.Errorf("split has %d devices for %d nodes", len(dev), len(g.Nodes))
	}
	nd := g.Accelerators + g.CPUs
	for v, d := range dev {
		if d < 0 || d >= nd {
			return nil, fmt.Errorf("node %s on device %d, want 0..%d", g.nodeName(v), d, nd-1)
		}
	}
	s := &Split{Graph: g, Device: append([]int(nil), dev...)}
	succ := g.succ()
	st := make([]Stage, nd)
	for d := range st {
		st[d].Device = d
		st[d].CPU = d >= g.Accelerators
	}
	for v, d := range dev {
		x := &st[d]
		x.Nodes = append(x.Nodes, v)
		t := g.Nodes[v].Acc
		if x.CPU {
			t = g.Nodes[v].CPU
		} else {
			x.Memory += g.Nodes[v].Size
		}
		x.Compute += t
		if g.Nodes[v].Backward {
			x.BackwardLoad += t
		} else {
			x.ForwardLoad += t
		}
	}
	// c_v is paid by v's accelerator when a successor is elsewhere, and by
	// every other accelerator that holds a successor.
	for v, ws := range succ {
		c := g.Nodes[v].Comm
		if c == 0 || len(ws) == 0 {
			continue
		}
		var paid []int // devices that pay, with the node whose pass it counts toward
		var pass []bool
		add := func(d int, back bool) {
			for _, p := range paid {
				if p == d {
					return
				}
			}
			paid = append(paid, d)
			pass = append(pass, back)
		}
		for _, w := range ws {
			if dev[w] != dev[v] {
				add(dev[v], g.Nodes[v].Backward)
			}
		}
		for _, w := range ws {
			if dev[w] != dev[v] {
				add(dev[w], g.Nodes[w].Backward)
			}
		}
		for n, d := range paid {
			if st[d].CPU {
				continue // no cost for CPU reads and writes (§3)
			}
			st[d].Comm += c
			if pass[n] {
				st[d].BackwardLoad += c
			} else {
				st[d].ForwardLoad += c
			}
		}
	}
	for d := range st {
		st[d].Load = st[d].Compute + st[d].Comm
		if !st[d].CPU && g.Memory > 0 && st[d].Memory > g.Memory*(1+1e-12) {
			s.OverMemory = append(s.OverMemory, d)
		}
	}
	s.Contiguous = contiguousSplit(g, succ, dev)
	s.Colocated = colocated(g, dev)
	// Pipeline order: the stages in the order of their first node in a
	// topological order, which is a topological order of the stages when
	// they are contiguous.
	first := make([]int, nd)
	for d := range first {
		first[d] = -1
	}
	for pos, v := range topo(len(g.Nodes), succ) {
		if g.Nodes[v].Backward {
			continue
		}
		if first[dev[v]] < 0 {
			first[dev[v]] = pos
		}
	}
	for pos, v := range topo(len(g.Nodes), succ) {
		if first[dev[v]] < 0 {
			first[dev[v]] = len(g.Nodes) + pos
		}
	}
	for d := range st {
		if len(st[d].Nodes) > 0 || keep[d] {
			s.Stages = append(s.Stages, st[d])
			s.MaxLoad = math.Max(s.MaxLoad, st[d].Load)
		}
	}
	for d := range first {
		if first[d] < 0 {
			first[d] = 2*len(g.Nodes) + d
		}
	}
	sort.SliceStable(s.Stages, func(i, j int) bool { return first[s.Stages[i].Device] < first[s.Stages[j].Device] })
	return s, nil
}

// Fits reports whether the split respects the memory cap.
func (s *Split) Fits() bool { return len(s.OverMemory) == 0 }

// Ordered returns s with its stages in pipeline order put on devices in
// that order: accelerators 0, 1, ... and CPU cores k, k+1, ... (a split's
// loads do not depend on which accelerator is which).
func (s *Split) Ordered() *Split {
	g := s.Graph
	rename := make([]int, g.Accelerators+g.CPUs)
	na, nc := 0, g.Accelerators
	for _, st := range s.Stages {
		if st.CPU {
			rename[st.Device] = nc
			nc++
		} else {
			rename[st.Device] = na
			na++
		}
	}
	dev := make([]int, len(s.Device))
	for v, d := range s.Device {
		dev[v] = rename[d]
	}
	t, _ := NewSplit(g, dev) // a renaming of a valid split is valid
	return t
}

// colocated reports whether every colour class sits on one device.
func colocated(g *Graph, dev []int) bool {
	at := map[int]int{}
	for v, n := range g.Nodes {
		if n.Class < 0 {
			continue
		}
		if d, ok := at[n.Class]; ok && d != dev[v] {
			return false
		}
		at[n.Class] = dev[v]
	}
	return true
}

// contiguousSplit reports whether, for every device, its forward nodes are
// contiguous in the forward subgraph and its backward nodes in the
// backward subgraph (Definition 3.1).
func contiguousSplit(g *Graph, succ [][]int, dev []int) bool {
	n := len(g.Nodes)
	pred := make([][]int, n)
	for v, ws := range succ {
		for _, w := range ws {
			pred[w] = append(pred[w], v)
		}
	}
	// reach marks the nodes of pass `back` reachable from set S (dev ==
	// d) along adj, without passing through the other pass.
	reach := func(d int, back bool, adj [][]int) []bool {
		seen := make([]bool, n)
		var stack []int
		for v := range n {
			if dev[v] == d && g.Nodes[v].Backward == back {
				stack = append(stack, v)
			}
		}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range adj[v] {
				if g.Nodes[w].Backward != back || seen[w] {
					continue
				}
				seen[w] = true
				stack = append(stack, w)
			}
		}
		return seen
	}
	nd := g.Accelerators + g.CPUs
	for d := range nd {
		for _, back := range []bool{false, true} {
			down, up := reach(d, back, succ), reach(d, back, pred)
			for v := range n {
				if dev[v] != d && down[v] && up[v] {
					return false
				}
			}
		}
	}
	return true
}

// SingleDevice is the time per sample of the whole model on one
// accelerator (no transfers), for scale.
func SingleDevice(g *Graph) float64 {
	t := 0.0
	for _, v := range g.Nodes {
		t += v.Acc
	}
	return t
}
