package partition

import (
	"fmt"
	"math"
	"sort"
)

// The latency of one sample (Tarnawski et al., "Efficient Algorithms for
// Device Placement of DNN Graph Operators", §4): no pipelining, one input
// at a time, and the time from its arrival to its last output.
//
// Mode of computation (§4): an accelerator holds one or more subgraphs,
// each a contiguous set of nodes (Definition 3.1). A subgraph is invoked
// once every node outside it with an edge into it has finished (its
// output is then in host memory) and, on an accelerator that holds several,
// once the previous one has finished (Fig. 4, constraint (14)); it moves
// its inputs in (c_u for every such node u), runs its nodes one after the
// other (Σ p_acc), and moves its outputs out (c_v for every node v of it
// with an edge leaving it). A node on a CPU starts when its predecessors
// have finished and takes p_cpu; as in the paper (§4, "a mild
// assumption"), there are as many CPU cores as the graph is wide, so CPU
// nodes never wait for a core and the number of cores does not matter.
// The latency is the largest finishing time.

// SampleSubgraph is one subgraph of a split and when it runs.
type SampleSubgraph struct {
	// Device is its accelerator; Piece its rank among the subgraphs of
	// that accelerator (0 for a contiguous split).
	Device, Piece int
	Nodes         []int // node indices, in the graph's order
	// Start is when its inputs are in host memory (and the accelerator is
	// free); Finish = Start + CommIn + Compute + CommOut.
	Start, Finish            float64
	CommIn, Compute, CommOut float64
	Memory                   float64
}

// SampleSchedule is the single-sample execution of a split.
type SampleSchedule struct {
	// Latency is the time of one sample: the largest Finish.
	Latency   float64
	Subgraphs []SampleSubgraph // in the order they start
	// CPUNodes are the nodes on CPU cores; Finish is every node's
	// finishing time (its subgraph's Finish on an accelerator).
	CPUNodes []int
	Finish   []float64
}

// MaxPieces is the most subgraphs one accelerator holds: 1 when every
// accelerator's part is contiguous (CPU nodes run one by one and need not
// be), 0 when no accelerator is used.
func (sc *SampleSchedule) MaxPieces() int {
	m := 0
	for _, st := range sc.Subgraphs {
		m = max(m, st.Piece+1)
	}
	return m
}

// SplitSampleLatency is the latency of one sample under split s: every
// accelerator's nodes cut into the fewest contiguous subgraphs, taken in
// the order of their dependences (Tarnawski et al.'s published
// evaluator does the same cut, and the cut leaves a contiguous
// accelerator whole).
func SplitSampleLatency(s *Split) (*SampleSchedule, error) {
	return PiecesSampleLatency(s, nil)
}

// PiecesSampleLatency is SplitSampleLatency with the subgraphs given: piece[v] is the
// rank of node v's subgraph on its accelerator (ignored on CPUs). nil
// cuts as SplitSampleLatency does. It fails where a subgraph is not contiguous
// or the pieces cannot run in their rank order.
func PiecesSampleLatency(s *Split, piece []int) (*SampleSchedule, error) {
	g := s.Graph
	n := len(g.Nodes)
	K := g.Accelerators
	succ := g.succ()
	pred := make([][]int, n)
	for v, ws := range succ {
		for _, w := range ws {
			pred[w] = append(pred[w], v)
		}
	}
	if piece == nil {
		piece = cutPieces(g, s.Device, pred)
	} else if len(piece) != n {
		return nil, fmt.Errorf("pieces given for %d nodes of %d", len(piece), n)
	}
	// Blocks: one per (accelerator, piece), one per CPU node.
	type key struct{ d, p int }
	blockOf := make([]int, n)
	index := map[key]int{}
	var blocks []SampleSubgraph
	var cpuBlock []int // node of a CPU block, -1 for a subgraph
	for v := range n {
		d := s.Device[v]
		if d >= K {
			blockOf[v] = len(cpuBlock)
			cpuBlock = append(cpuBlock, v)
			blocks = append(blocks, SampleSubgraph{Device: d, Piece: -1})
			continue
		}
		if piece[v] < 0 {
			return nil, fmt.Errorf("node %s: piece %d", g.nodeName(v), piece[v])
		}
		k := key{d, piece[v]}
		b, ok := index[k]
		if !ok {
			b = len(cpuBlock)
			index[k] = b
			cpuBlock = append(cpuBlock, -1)
			blocks = append(blocks, SampleSubgraph{Device: d, Piece: piece[v]})
		}
		blockOf[v] = b
		blocks[b].Nodes = append(blocks[b].Nodes, v)
	}
	nb := len(blocks)
	// Block DAG: data edges, and the order of the pieces of an
	// accelerator.
	bsucc := make([]map[int]bool, nb)
	for i := range bsucc {
		bsucc[i] = map[int]bool{}
	}
	for v, ws := range succ {
		for _, w := range ws {
			if blockOf[v] != blockOf[w] {
				bsucc[blockOf[v]][blockOf[w]] = true
			}
		}
	}
	var subs []int
	for b := range blocks {
		if cpuBlock[b] < 0 {
			subs = append(subs, b)
		}
	}
	sort.Slice(subs, func(i, j int) bool {
		a, c := blocks[subs[i]], blocks[subs[j]]
		if a.Device != c.Device {
			return a.Device < c.Device
		}
		return a.Piece < c.Piece
	})
	prev := make([]int, nb)
	for i := range prev {
		prev[i] = -1
	}
	for i := 1; i < len(subs); i++ {
		if blocks[subs[i]].Device == blocks[subs[i-1]].Device {
			prev[subs[i]] = subs[i-1]
			bsucc[subs[i-1]][subs[i]] = true
		}
	}
	// A subgraph that is not contiguous has a path leaving it and coming
	// back: a cycle of the block DAG through it.
	adj := make([][]int, nb)
	for b := range nb {
		for c := range bsucc[b] {
			adj[b] = append(adj[b], c)
		}
		sort.Ints(adj[b])
	}
	order := topo(nb, adj)
	if len(order) != nb {
		return nil, fmt.Errorf("a subgraph is not contiguous, or the subgraphs of an accelerator cannot run in their order")
	}
	finish := make([]float64, n)
	out := &SampleSchedule{Finish: finish}
	inSet := make([]bool, n)
	for _, b := range order {
		if v := cpuBlock[b]; v >= 0 {
			t := 0.0
			for _, u := range pred[v] {
				t = math.Max(t, finish[u])
			}
			finish[v] = t + g.Nodes[v].CPU
			out.Latency = math.Max(out.Latency, finish[v])
			out.CPUNodes = append(out.CPUNodes, v)
			continue
		}
		st := &blocks[b]
		for _, v := range st.Nodes {
			inSet[v] = true
		}
		start := 0.0
		if p := prev[b]; p >= 0 {
			start = blocks[p].Finish
		}
		seen := map[int]bool{}
		for _, v := range st.Nodes {
			st.Compute += g.Nodes[v].Acc
			st.Memory += g.Nodes[v].Size
			for _, u := range pred[v] {
				if !inSet[u] && !seen[u] {
					seen[u] = true
					start = math.Max(start, finish[u])
					st.CommIn += g.Nodes[u].Comm
				}
			}
			for _, w := range succ[v] {
				if !inSet[w] {
					st.CommOut += g.Nodes[v].Comm
					break
				}
			}
		}
		st.Start = start
		st.Finish = start + st.CommIn + st.Compute + st.CommOut
		for _, v := range st.Nodes {
			inSet[v] = false
			finish[v] = st.Finish
		}
		out.Latency = math.Max(out.Latency, st.Finish)
		out.Subgraphs = append(out.Subgraphs, *st)
	}
	sort.SliceStable(out.Subgraphs, func(i, j int) bool { return out.Subgraphs[i].Start < out.Subgraphs[j].Start })
	sort.Ints(out.CPUNodes)
	return out, nil
}

// cutPieces cuts every accelerator's nodes into the fewest contiguous
// pieces as Tarnawski et al.'s published evaluator does: a node's piece is
// the most times a path to it leaves its accelerator's set and comes
// back.
func cutPieces(g *Graph, dev []int, pred [][]int) []int {
	n := len(g.Nodes)
	piece := make([]int, n)
	order := topo(n, g.succ())
	for d := range g.Accelerators {
		depth := make([]int, n) // pieces left behind on the way to v, +1 on d
		for _, v := range order {
			on := dev[v] == d
			best := 0
			if on {
				best = 1
			}
			for _, u := range pred[v] {
				x := depth[u]
				if on && dev[u] != d {
					x++
				}
				best = max(best, x)
			}
			depth[v] = best
			if on {
				piece[v] = best - 1
			}
		}
	}
	return piece
}

// GreedyFill is the greedy baseline of Tarnawski et al.'s §7 for latency:
// the colour classes and the strongly connected components they create
// contracted, the units in a topological order, and each accelerator in
// turn filled with as many of them as fit its memory; a unit that fits
// no accelerator left goes to the CPUs. It does not look at times. Unlike
// Greedy (the max-load baseline) it does not spread the load.
func GreedyFill(g *Graph) (*Split, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	u, err := contract(g)
	if err != nil {
		return nil, err
	}
	K := g.Accelerators
	piece := make([]int, u.n)
	d, mem, used := 0, 0.0, false
	for _, x := range topo(u.n, u.succ) {
		onCPU := u.noAcc[x] > 0 || (g.Memory > 0 && u.size[x] > g.Memory*(1+1e-12))
		if !onCPU && used && g.Memory > 0 && mem+u.size[x] > g.Memory*(1+1e-12) {
			d, mem, used = d+1, 0, false
		}
		if onCPU || d >= K {
			if g.CPUs == 0 {
				return nil, fmt.Errorf("greedy fill: %s fits no accelerator and there is no CPU", g.nodeName(firstOf(u, x)))
			}
			piece[x] = K
			continue
		}
		piece[x] = d
		mem += u.size[x]
		used = true
	}
	return unitSplit(g, u, piece)
}

func firstOf(u *units, x int) int {
	for v, c := range u.of {
		if c == x {
			return v
		}
	}
	return 0
}

// SampleLatencySetting is Tarnawski et al.'s memory-bound deployment of §7 for
// a model of total size Σ m_v bytes: accelerators of 600 MiB for models up
// to 3.6 GB and of 2 GiB for models of 9 GB or more, as many as it takes
// to hold 1.5 times the model (the paper's "1.4–1.8 times"), and 8 CPU
// cores.
type SampleLatencySetting struct {
	Accelerators, CPUs int
	Memory             float64 // bytes per accelerator
	ModelBytes         float64
}

// UsePaperSampleLatencySetting gives g the accelerators, memory cap and CPU
// cores of PaperSampleLatencySetting (tessel partition --paper-memory); g must
// be a graph in Tarnawski et al.'s format.
func (g *Graph) UsePaperSampleLatencySetting() error {
	if g.IDs == nil {
		return fmt.Errorf("--paper-memory applies to graphs in Tarnawski et al.'s format")
	}
	s, err := PaperSampleLatencySetting(g)
	if err != nil {
		return err
	}
	g.Accelerators, g.Memory, g.CPUs = s.Accelerators, s.Memory, s.CPUs
	return nil
}

// PaperSampleLatencySetting derives the setting of §7 from the model's size. It
// reproduces the published latency inputs' maxFPGAs and maxSizePerFPGA
// for seven of their eight graphs; BERT-12 at operator granularity ships
// with 8 accelerators where the rule gives 7 (8 hold 1.85 times the model,
// outside the paper's range). A model between 3.6 and 9 GB, which the
// paper does not cover, is an error.
func PaperSampleLatencySetting(g *Graph) (SampleLatencySetting, error) {
	total := 0.0
	for _, v := range g.Nodes {
		total += v.Size
	}
	s := SampleLatencySetting{CPUs: 8, ModelBytes: total}
	switch {
	case total <= 0:
		return s, fmt.Errorf("the model has no size: the memory-bound setting of Tarnawski et al. §7 needs node sizes in bytes")
	case total <= 3.6e9:
		s.Memory = 600 << 20
	case total >= 9e9:
		s.Memory = 2 << 30
	default:
		return s, fmt.Errorf("the model's size %.3g bytes is between 3.6 GB and 9 GB, which Tarnawski et al. §7 does not cover: give --devices and --memory", total)
	}
	s.Accelerators = int(math.Ceil(1.5*total/s.Memory - 1e-9))
	return s, nil
}

// ScaleComm multiplies every node's transfer cost c_v by f (f > 0).
func (g *Graph) ScaleComm(f float64) {
	for i := range g.Nodes {
		g.Nodes[i].Comm *= f
	}
}
