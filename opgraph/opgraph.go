// Package opgraph builds operator graphs to plan: the random layered DAGs
// of She et al., "Automatic Operator-level Parallelism Planning for
// Distributed Deep Learning – A Mixed-Integer Programming Approach", §V-B
// (200 operators, in- and out-degree at most 3, random compute times,
// memory and tensor sizes), as placements whose every operator may run on
// any one device (its candidates), and the cluster they run on, whose
// links make a transfer take about as long as an operator.
//
// The same options give the same graph, byte for byte: the random numbers
// come from a generator written here (SplitMix64), not from a library
// whose sequence could change.
package opgraph

import (
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
)

// Options describe a random layered DAG. The zero value of a field means
// its default (Defaults).
type Options struct {
	Nodes     int    // operators; default 200
	Seed      uint64 // the random stream; the same seed gives the same graph
	Devices   int    // devices of the placement, every one a candidate of every operator; default 2
	MaxDegree int    // most inputs and most outputs of an operator; default 3
	// Width is the mean number of operators of a layer; default 12. A
	// layer has 1..2·Width-1 of them, uniformly.
	Width int
	// Times, Memories and Sizes are the ranges, inclusive, an operator's
	// time, its memory and a tensor's size are drawn from, uniformly:
	// default 1..9, 1..4 and 1..9.
	MinTime, MaxTime     int
	MinMemory, MaxMemory int
	MinSize, MaxSize     int
}

// Defaults fills the zero fields of o with the defaults of §V-B's graph.
func (o Options) Defaults() Options {
	def := func(x *int, v int) {
		if *x == 0 {
			*x = v
		}
	}
	def(&o.Nodes, 200)
	def(&o.Devices, 2)
	def(&o.MaxDegree, 3)
	def(&o.Width, 12)
	def(&o.MinTime, 1)
	def(&o.MaxTime, 9)
	def(&o.MinMemory, 1)
	def(&o.MaxMemory, 4)
	def(&o.MinSize, 1)
	def(&o.MaxSize, 9)
	return o
}

// Limits of the options.
const (
	MaxNodes = 10_000
)

// Validate checks the options after Defaults: one line naming the field.
func (o Options) Validate() error {
	switch {
	case o.Nodes < 1 || o.Nodes > MaxNodes:
		return fmt.Errorf("opgraph: nodes must be in 1..%d, got %d", MaxNodes, o.Nodes)
	case o.Devices < 1 || o.Devices > placement.MaxDevices:
		return fmt.Errorf("opgraph: devices must be in 1..%d, got %d", placement.MaxDevices, o.Devices)
	case o.MaxDegree < 1 || o.MaxDegree > 64:
		return fmt.Errorf("opgraph: max degree must be in 1..64, got %d", o.MaxDegree)
	case o.Width < 1 || o.Width > MaxNodes:
		return fmt.Errorf("opgraph: width must be in 1..%d, got %d", MaxNodes, o.Width)
	case o.MinTime < 1 || o.MaxTime < o.MinTime || o.MaxTime > placement.MaxTime:
		return fmt.Errorf("opgraph: times must be a range within 1..%d, got %d..%d", placement.MaxTime, o.MinTime, o.MaxTime)
	case o.MinMemory < 0 || o.MaxMemory < o.MinMemory || o.MaxMemory > 1_000_000:
		return fmt.Errorf("opgraph: memories must be a range within 0..1000000, got %d..%d", o.MinMemory, o.MaxMemory)
	case o.MinSize < 1 || o.MaxSize < o.MinSize || o.MaxSize > 1_000_000:
		return fmt.Errorf("opgraph: sizes must be a range within 1..1000000, got %d..%d", o.MinSize, o.MaxSize)
	}
	return nil
}

// rng is SplitMix64 (Steele, Lea and Flood): tiny, fast, and its sequence
// is fixed by this code alone.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// in returns an integer in lo..hi, inclusive (the modulo bias is below
// 2⁻⁴⁰ for the ranges used here).
func (r *rng) in(lo, hi int) int {
	return lo + int(r.next()%uint64(hi-lo+1))
}

// Graph is a random DAG before it becomes a placement.
type Graph struct {
	Times, Memories []int
	Edges           []Edge
}

// Edge is a tensor from operator From to operator To (From < To), of
// size Size.
type Edge struct {
	From, To int
	Size     int
}

// Random draws the DAG of o (after Defaults). Operators are numbered in
// layers: the operators of a layer take 1..MaxDegree inputs, each from an
// operator of the layer before (or, when those have MaxDegree outputs
// already, of an earlier one) with fewer than MaxDegree outputs; the first
// layer's operators take none. An operator with no output left anywhere
// before it becomes an input of the graph. Every operator but those of
// the last layer that got no consumer is left as it is: the graph may
// have several outputs, as §V-B's.
func Random(o Options) (*Graph, error) {
	o = o.Defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &rng{s: o.Seed}
	g := &Graph{Times: make([]int, o.Nodes), Memories: make([]int, o.Nodes)}
	out := make([]int, o.Nodes)
	layerStart := 0 // first operator of the current layer
	prevStart := 0  // first operator of the previous layer
	for layerStart < o.Nodes {
		width := min(r.in(1, 2*o.Width-1), o.Nodes-layerStart)
		for v := layerStart; v < layerStart+width; v++ {
			g.Times[v] = r.in(o.MinTime, o.MaxTime)
			g.Memories[v] = r.in(o.MinMemory, o.MaxMemory)
			if layerStart == 0 {
				continue
			}
			want := r.in(1, o.MaxDegree)
			var from []int
			// Previous layer first, then earlier ones, newest first.
			pools := [][2]int{{prevStart, layerStart}, {0, prevStart}}
			for _, pool := range pools {
				for len(from) < want {
					free := freeIn(out, from, pool[0], pool[1], o.MaxDegree)
					if len(free) == 0 {
						break
					}
					u := free[r.in(0, len(free)-1)]
					from = append(from, u)
				}
			}
			// Inputs in increasing order, so that the file reads in order.
			sortInts(from)
			for _, u := range from {
				out[u]++
				g.Edges = append(g.Edges, Edge{From: u, To: v, Size: r.in(o.MinSize, o.MaxSize)})
			}
		}
		prevStart, layerStart = layerStart, layerStart+width
	}
	return g, nil
}

// freeIn lists the operators of lo..hi-1 with fewer than most outputs and
// not yet in taken.
func freeIn(out, taken []int, lo, hi, most int) []int {
	var free []int
	for u := lo; u < hi; u++ {
		if out[u] < most && !contains(taken, u) {
			free = append(free, u)
		}
	}
	return free
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// ID is the block id of operator v: "op" and its number.
func ID(v int) string { return fmt.Sprintf("op%d", v) }

// Sum is the time of every operator together: the makespan on one device.
func (g *Graph) Sum() int {
	s := 0
	for _, t := range g.Times {
		s += t
	}
	return s
}

// DefaultLink is the link of the cluster Cluster builds: a tensor of size
// z takes ⌈z⌉, so that a transfer of the default sizes (1..9) takes as
// long as an operator of the default times (1..9) on average.
func DefaultLink() cluster.Link { return cluster.Link{Latency: 0, PerUnit: 1} }

// Cluster is the cluster of §V-B's experiment for n devices: devices of
// speed 1 without a memory limit (the paper plans without memory
// constraints), every pair joined by link.
func Cluster(n int, link cluster.Link) *cluster.Cluster {
	c := cluster.Uniform(n)
	c.Default = link
	return c
}

// Placement is g as a placement of devices devices named name: operator v
// is block ID(v), a forward block of its time and memory that may run on
// any one device (candidates [0], [1], …), and every edge a dependency
// carrying its size.
func (g *Graph) Placement(name string, devices int) (*placement.Placement, error) {
	p := &placement.Placement{Name: name, Devices: devices, Sizes: map[placement.Dep]float64{}}
	cands := make([][]int, devices)
	for d := range cands {
		cands[d] = []int{d}
	}
	for v, t := range g.Times {
		p.Blocks = append(p.Blocks, placement.Block{ID: ID(v), Kind: placement.Forward, Candidates: cloneGroups(cands), Time: t, Memory: g.Memories[v]})
	}
	for _, e := range g.Edges {
		d := placement.Dep{From: e.From, To: e.To}
		p.Deps = append(p.Deps, d)
		if e.Size != 1 {
			p.Sizes[d] = float64(e.Size)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("opgraph: %w", err)
	}
	return p, nil
}

func cloneGroups(g [][]int) [][]int {
	out := make([][]int, len(g))
	for n, x := range g {
		out[n] = append([]int(nil), x...)
	}
	return out
}

// Summary is the line tessel gen-dag prints about p, a placement
// Generate made: its operators, dependencies and devices, and how long one
// device takes to run every operator (the sum of their times).
func Summary(p *placement.Placement) string {
	sum := 0
	for _, b := range p.Blocks {
		sum += b.Time
	}
	return fmt.Sprintf("%s: %d operators, %d dependencies, %d devices; one device takes %d\n", p.Name, len(p.Blocks), len(p.Deps), p.Devices, sum)
}

// Generate is Random as a placement, with its name "dag-N-sSEED" and on o's
// devices.
func Generate(o Options) (*placement.Placement, error) {
	o = o.Defaults()
	g, err := Random(o)
	if err != nil {
		return nil, err
	}
	return g.Placement(fmt.Sprintf("dag-%d-s%d", o.Nodes, o.Seed), o.Devices)
}
