// Package hetero cuts a layer profile into pipeline stages on a
// heterogeneous cluster (docs/heterogeneous.md): each stage's load is its
// time on the device it is given — the device's speed, the profile's time
// for the device's type, or the roofline of the layer's FLOPs and bytes on
// the device's peak FLOP rate and memory bandwidth (Wu et al., "Rethinking
// Dynamic Networks and Heterogeneous Computing with Automatic
// Parallelization", eqs 1–2) — plus the transfers at its ends over the
// links to its neighbours; each device's memory is its own. A dynamic
// program chooses the cut points and which device runs which stage, so the
// order of the devices along the pipeline is chosen too (it matters where
// links differ).
//
// The split is reported beside the speed-oblivious ones evaluated on the
// same cluster: the even split by layer count and the split of least max
// load when every device is taken as the same, both with the devices in
// their cluster order.
package hetero

import (
	"fmt"
	"math"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/partition"
)

// NodeTime is the time of node v on device d, in the profile's time: the
// profile's time for d's type where it gives one ("device_times"), else
// the roofline's max(FLOPs / peak, bytes / bandwidth) where v has FLOPs or
// bytes and d a peak FLOP rate (Wu et al., eqs 1–2: the attainable rate is
// min(K·bandwidth, peak) with K = FLOPs / bytes), else v's time over d's
// speed.
func NodeTime(v partition.Node, d cluster.Device) float64 {
	if d.Type != "" {
		if t, ok := v.TypeTimes[d.Type]; ok {
			return t
		}
	}
	if d.PeakFLOPs > 0 && (v.FLOPs > 0 || v.MemoryAccess > 0) {
		t := v.FLOPs / d.PeakFLOPs
		if d.MemoryBandwidth > 0 {
			t = max(t, v.MemoryAccess/d.MemoryBandwidth)
		}
		return t
	}
	return v.Acc / d.Speed
}

// Model is a layer profile as the stages see it: per layer its nodes
// (forward, and backward when training), in the profile's order, which
// must be a topological order of the layers; stages are intervals of it.
type Model struct {
	Graph    *partition.Graph
	Layers   [][]int // node indices per layer
	Training bool
	// boundary[ℓ] is the profile's transfer cost ("comm") a device pays
	// at a cut after layer ℓ: the output forward, its gradient backward
	// (Tarnawski et al.'s c_v, paid by both devices).
	boundary []float64
	size     []float64 // output size of layer ℓ
	memory   []float64 // Σ node sizes of layer ℓ
}

// NewModel reads the layers of a layer profile. Graphs of Tarnawski et
// al.'s published set (no layers) are refused.
func NewModel(g *partition.Graph) (*Model, error) {
	if g.IDs != nil {
		return nil, fmt.Errorf("a cluster needs a layer profile, not a graph of Tarnawski et al.'s set")
	}
	n := 0
	for _, v := range g.Nodes {
		n = max(n, v.Layer+1)
	}
	m := &Model{Graph: g, Layers: make([][]int, n), Training: g.Training()}
	for i, v := range g.Nodes {
		if v.Layer < 0 {
			return nil, fmt.Errorf("node %q has no layer", v.Name)
		}
		m.Layers[v.Layer] = append(m.Layers[v.Layer], i)
	}
	// A cut after layer ℓ must leave every edge going forward (or, in
	// the backward pass, backward): check the profile's order.
	for _, e := range g.Edges {
		a, b := g.Nodes[e[0]], g.Nodes[e[1]]
		if a.Backward == b.Backward && (!a.Backward && a.Layer > b.Layer || a.Backward && a.Layer < b.Layer) {
			return nil, fmt.Errorf("edge %s -> %s goes against the layers' order: a cluster needs the layers in a topological order", a.Name, b.Name)
		}
	}
	m.boundary = make([]float64, n)
	m.size = make([]float64, n)
	m.memory = make([]float64, n)
	for l, vs := range m.Layers {
		for _, v := range vs {
			m.memory[l] += g.Nodes[v].Size
		}
		m.size[l] = 1
		if l < len(g.OutputSizes) {
			m.size[l] = g.OutputSizes[l]
		}
	}
	for _, e := range g.Edges {
		a, b := g.Nodes[e[0]], g.Nodes[e[1]]
		if a.Layer == b.Layer {
			continue
		}
		// The cut after min(layer): every crossing edge's c_v counts
		// once per node and cut, as in partition.NewSplit for a chain.
		lo, hi := min(a.Layer, b.Layer), max(a.Layer, b.Layer)
		if hi == lo+1 {
			m.boundary[lo] += a.Comm
		}
	}
	return m, nil
}

// Comm is the profile's transfer cost a device pays at a cut after layer
// l (Tarnawski et al.'s c_v, both passes), without the links'.
func (m *Model) Comm(l int) float64 { return m.boundary[l] }

// Cost is a model on a cluster: the times and capacities the dynamic
// program and the evaluation ask.
type Cost struct {
	Model   *Model
	Cluster *cluster.Cluster
	// TimeUnit is the model time of one step of the schedule search's
	// copy of a split's placement (partition.PlacementOptions' TimeUnit).
	TimeUnit float64
	// Step is the model time of one step of a split's placement: 0 for
	// one that times every block and transfer within half a percent
	// (partition.PlacementOptions' Step), TimeUnit for a placement the
	// search runs on as it is.
	Step     float64
	time     [][]float64 // per device, prefix sums of layer times
	capacity []float64   // per device, 0: none
}

// NewCost prepares the model's times on every device of c.
func NewCost(m *Model, c *cluster.Cluster, unit float64) *Cost {
	k := &Cost{Model: m, Cluster: c, TimeUnit: unit}
	g := m.Graph
	for _, d := range c.Devices {
		pre := make([]float64, len(m.Layers)+1)
		for l, vs := range m.Layers {
			t := 0.0
			for _, v := range vs {
				t += NodeTime(g.Nodes[v], d)
			}
			pre[l+1] = pre[l] + t
		}
		k.time = append(k.time, pre)
		cp := g.Memory
		if g.Bytes && d.MemoryBytes > 0 {
			cp = d.MemoryBytes
		}
		k.capacity = append(k.capacity, cp)
	}
	return k
}

// Compute is the time of layers [a, b) on device d.
func (k *Cost) Compute(d, a, b int) float64 { return k.time[d][b] - k.time[d][a] }

// Memory is what layers [a, b) hold.
func (k *Cost) Memory(a, b int) float64 {
	s := 0.0
	for l := a; l < b; l++ {
		s += k.Model.memory[l]
	}
	return s
}

// Capacity is device d's memory (0: none).
func (k *Cost) Capacity(d int) float64 { return k.capacity[d] }

// LinkLoad is the time the link from x to y is busy per sample for a cut
// after layer l: the layer's output (and, training, its gradient back),
// each the time of the pair's fastest link for its size, in the model's
// time (the cluster's times are, see Run). A link is a resource of its
// own: it bounds the time per sample as a device does, and its transfers
// overlap the devices' computation.
func (k *Cost) LinkLoad(x, y, l int) float64 {
	passes := 1.0
	if k.Model.Training {
		passes = 2
	}
	return passes * k.Cluster.Pair(x, y).Duration(k.Model.size[l])
}

// Stage is one stage of a split on a cluster.
type Stage struct {
	From, To int      `json:"-"` // layers [From, To)
	Layers   []string `json:"layers"`
	Device   int      `json:"device"`
	Load     float64  `json:"load"`    // Compute + Transfer
	Compute  float64  `json:"compute"` // the layers' time on the device
	// Transfer is the profile's "comm" the device pays at the stage's
	// ends (Tarnawski et al.'s c_v); Link the load of the link to the
	// next stage (LinkLoad, 0 for the last).
	Transfer float64 `json:"transfer"`
	Link     float64 `json:"link"`
	Memory   float64 `json:"memory"`
	Capacity float64 `json:"capacity,omitempty"`
}

// Split is a model cut into stages, one per device, in pipeline order.
type Split struct {
	Method  string  `json:"method"`
	Stages  []Stage `json:"stages"`
	MaxLoad float64 `json:"max_load"` // the time per sample: the largest stage or link load
	Fits    bool    `json:"fits"`     // every stage within its device's memory
}

// Evaluate is the split of layers cut at cuts (stage s holds layers
// [cuts[s], cuts[s+1]), cuts[0] = 0, the last = the layer count) with
// stage s on device order[s].
func (k *Cost) Evaluate(method string, cuts, order []int) *Split {
	s := &Split{Method: method, Fits: true}
	names := k.Model.names()
	for i, d := range order {
		a, b := cuts[i], cuts[i+1]
		st := Stage{From: a, To: b, Layers: names[a:b], Device: d, Compute: k.Compute(d, a, b), Memory: k.Memory(a, b), Capacity: k.Capacity(d)}
		if i > 0 {
			st.Transfer += k.Model.boundary[a-1]
		}
		if i+1 < len(order) {
			st.Transfer += k.Model.boundary[b-1]
			st.Link = k.LinkLoad(d, order[i+1], b-1)
		}
		st.Load = st.Compute + st.Transfer
		s.MaxLoad = max(s.MaxLoad, st.Link)
		if st.Capacity > 0 && st.Memory > st.Capacity*(1+1e-12) {
			s.Fits = false
		}
		s.MaxLoad = max(s.MaxLoad, st.Load)
		s.Stages = append(s.Stages, st)
	}
	return s
}

func (m *Model) names() []string {
	out := make([]string, len(m.Layers))
	for l, vs := range m.Layers {
		out[l] = m.Graph.Nodes[vs[0]].Name
	}
	return out
}

// Cuts are the split's cut points.
func (s *Split) Cuts() []int {
	cuts := []int{0}
	for _, st := range s.Stages {
		cuts = append(cuts, st.To)
	}
	return cuts
}

// Order is the split's device per stage.
func (s *Split) Order() []int {
	var out []int
	for _, st := range s.Stages {
		out = append(out, st.Device)
	}
	return out
}

// EvenCuts cuts n layers into k stages of equal layer counts, the first
// ones taking one more where k does not divide n.
func EvenCuts(n, k int) []int {
	cuts := []int{0}
	base, extra := n/k, n%k
	for s := range k {
		c := base
		if s < extra {
			c++
		}
		cuts = append(cuts, cuts[len(cuts)-1]+c)
	}
	return cuts
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

var inf = math.Inf(1)
