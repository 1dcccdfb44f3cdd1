package hetero

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
)

// Options configure Run.
type Options struct {
	// TimeUnit is the model time of one placement step, the unit of the
	// cluster's link times; 0 chooses one from the even split's blocks
	// (partition.AutoTimeUnit).
	TimeUnit float64
	// MemoryUnit converts the split to a placement
	// (partition.PlacementOptions).
	MemoryUnit float64
}

// Report is a split on a cluster beside the speed-oblivious splits on the
// same cluster; its JSON is tessel partition --cluster --json.
type Report struct {
	Model    string  `json:"model"`
	Devices  int     `json:"devices"`
	Training bool    `json:"training"`
	TimeUnit float64 `json:"time_unit"`
	// Split is the split found: stages in pipeline order, each on the
	// device the program chose. Exact says it is proven the least max
	// load (links that depend only on the devices' classes).
	Split *Split `json:"split"`
	Exact bool   `json:"exact"`
	// Even and Oblivious are the speed-oblivious splits with the devices
	// in the cluster's order, evaluated on the cluster: the even split by
	// layer count and the split of least max load were every device the
	// same (speed 1, no links, the model's memory cap).
	Even      *Split `json:"even"`
	Oblivious *Split `json:"oblivious"`

	// Converted is the split's placement (stage s on placement device s)
	// and Cluster the cluster as that placement runs on it: device s is
	// the cluster's device Split.Stages[s].Device, at speed 1 (the
	// placement's block times are already the device's).
	Converted *partition.Converted `json:"-"`
	Cluster   *cluster.Cluster     `json:"-"`
	Cost      *Cost                `json:"-"`
	Graph     *partition.Graph     `json:"-"`
	split     *partition.Split     // the split of the graph with its devices' times
}

// InModelUnit is c with its times in g's time unit (cluster.InUnit): a
// cluster that states no unit is taken to be in g's; one that states a
// unit needs a profile that states one.
func InModelUnit(g *partition.Graph, c *cluster.Cluster) (*cluster.Cluster, error) {
	switch {
	case c.TimeUnit == "":
		return c, nil
	case g.TimeUnit == "":
		return nil, fmt.Errorf("the cluster's times are in %s but the model states no \"time_unit\"", c.TimeUnit)
	}
	return c.InUnit(g.TimeUnit)
}

// Run cuts model g onto every device of cluster c, whose times are taken
// in g's unit (InModelUnit).
func Run(ctx context.Context, g *partition.Graph, c *cluster.Cluster, opt Options) (*Report, error) {
	m, err := NewModel(g)
	if err != nil {
		return nil, err
	}
	if c, err = InModelUnit(g, c); err != nil {
		return nil, err
	}
	D := len(c.Devices)
	if len(m.Layers) < D {
		return nil, fmt.Errorf("%w: %d layers for %d devices (one stage each)", ErrNoSplit, len(m.Layers), D)
	}
	even := EvenCuts(len(m.Layers), D)
	unit := opt.TimeUnit
	if unit == 0 {
		unit = AutoTimeUnit(m, c)
	}
	k := NewCost(m, c, unit)
	best, exact, err := k.Best(ctx)
	if err != nil {
		return nil, err
	}
	// The speed-oblivious optimum: every device the first one's kind at
	// speed 1, the model's cap, no links.
	u := cluster.Uniform(D)
	for d := range u.Devices {
		u.Devices[d].MemoryBytes = 0
	}
	ob, _, err := NewCost(m, u, unit).Best(ctx)
	r := &Report{Model: g.Name, Devices: D, Training: m.Training, TimeUnit: unit, Split: best, Exact: exact,
		Even: k.Evaluate("even", even, identity(D)), Cost: k, Graph: g}
	if err == nil {
		r.Oblivious = k.Evaluate("oblivious", ob.Cuts(), identity(D))
	}
	if r.Converted, r.Cluster, r.split, err = k.Placement(best, opt.MemoryUnit); err != nil {
		return nil, err
	}
	return r, nil
}

// AutoTimeUnit is the time unit partition.AutoTimeUnit gives the even
// split's blocks (per stage and pass) on the cluster, devices in order.
func AutoTimeUnit(m *Model, c *cluster.Cluster) float64 {
	cuts := EvenCuts(len(m.Layers), len(c.Devices))
	var ts []float64
	for s, d := range c.Devices {
		var f, b float64
		for l := cuts[s]; l < cuts[s+1]; l++ {
			for _, v := range m.Layers[l] {
				if m.Graph.Nodes[v].Backward {
					b += NodeTime(m.Graph.Nodes[v], d)
				} else {
					f += NodeTime(m.Graph.Nodes[v], d)
				}
			}
		}
		ts = append(ts, f, b)
	}
	return partition.AutoTimeUnit(ts)
}

// Placement converts split s to a placement (and returns the
// partition.Split it is made from), stage i on placement device
// i (where a cluster device holds several stages, an interleaved split:
// all of them on the placement device of its first) with its nodes' times on its device (partition.ToPlacement, times in
// k.TimeUnit steps), and returns the cluster as the placement runs on it:
// device i is the cluster's device of stage i at speed 1, links between
// them as in the cluster; a dependency across a cut carries the cut
// layer's output size.
func (k *Cost) Placement(s *Split, memoryUnit float64) (*partition.Converted, *cluster.Cluster, *partition.Split, error) {
	m, g := k.Model, k.Model.Graph
	h := *g
	h.Nodes = append([]partition.Node(nil), g.Nodes...)
	// pos[i]: the placement device of stage i, the first stage on the
	// same cluster device (stage i itself unless a device holds several
	// stages: an interleaved split).
	pos := make([]int, len(s.Stages))
	var order []int
	first := map[int]int{}
	for i, st := range s.Stages {
		j, ok := first[st.Device]
		if !ok {
			j = len(order)
			first[st.Device] = j
			order = append(order, st.Device)
		}
		pos[i] = j
	}
	chunked := len(order) < len(s.Stages)
	h.Accelerators, h.CPUs = len(order), 0
	dev := make([]int, len(g.Nodes))
	for i, st := range s.Stages {
		d := k.Cluster.Devices[st.Device]
		for l := st.From; l < st.To; l++ {
			for _, v := range m.Layers[l] {
				x := &h.Nodes[v]
				t := NodeTime(g.Nodes[v], d)
				if x.Acc > 0 && x.Input+x.Weight > 0 {
					f := t / x.Acc
					x.Input, x.Weight = x.Input*f, x.Weight*f
				}
				x.Acc, x.CPU = t, t
				dev[v] = pos[i]
			}
		}
	}
	sp, err := partition.NewSplit(&h, dev)
	if err != nil {
		return nil, nil, nil, err
	}
	// The transfers between consecutive stages, which the placement's
	// step must time too.
	var transfers []float64
	for i := 1; i < len(s.Stages); i++ {
		a, b := s.Stages[i-1].Device, s.Stages[i].Device
		if a != b {
			transfers = append(transfers, k.Cluster.Pair(a, b).Duration(m.size[s.Stages[i].From-1]))
		}
	}
	conv, err := partition.ToPlacement(sp, partition.PlacementOptions{Name: g.Name, TimeUnit: k.TimeUnit, Step: k.Step, Transfers: transfers, MemoryUnit: memoryUnit})
	if err != nil {
		return nil, nil, nil, err
	}
	p := conv.Placement
	reduce(p)
	size := func(x, y int) float64 { return m.size[s.Stages[max(x, y)].From-1] }
	if chunked {
		// Devices x and y meet at several cuts: the largest of their
		// outputs (exact where the layers' outputs are alike).
		cut := map[[2]int]float64{}
		for i := 1; i < len(s.Stages); i++ {
			key := [2]int{min(pos[i-1], pos[i]), max(pos[i-1], pos[i])}
			cut[key] = max(cut[key], m.size[s.Stages[i].From-1])
		}
		size = func(x, y int) float64 {
			if z, ok := cut[[2]int{min(x, y), max(x, y)}]; ok {
				return z
			}
			return 1
		}
	}
	for _, d := range p.Deps {
		a, b := p.Blocks[d.From].Devices, p.Blocks[d.To].Devices
		if len(a) == 1 && len(b) == 1 && a[0] != b[0] {
			z := size(a[0], b[0])
			if z != 1 {
				if p.Sizes == nil {
					p.Sizes = map[placement.Dep]float64{}
				}
				p.Sizes[d] = z
			}
		}
	}
	return conv, k.Permuted(order), sp, nil
}

// Permuted is the cluster with device i the cluster's device order[i] at
// speed 1 (no type or roofline figures: the placement's times are
// already the device's), links carried along.
func (k *Cost) Permuted(order []int) *cluster.Cluster {
	c := k.Cluster
	q := &cluster.Cluster{Default: c.Default, QueuedLinks: c.QueuedLinks, TimeUnit: c.TimeUnit}
	for _, d := range order {
		dev := c.Devices[d]
		if dev.Host != nil {
			h := *dev.Host
			dev.Host = &h
		}
		dev.Speed, dev.Type, dev.PeakFLOPs, dev.MemoryBandwidth = 1, "", 0, 0
		q.Devices = append(q.Devices, dev)
	}
	for i := range order {
		for j := i + 1; j < len(order); j++ {
			if l := c.Link(order[i], order[j]); l != c.Default {
				q.Pairs = append(q.Pairs, cluster.Pair{From: i, To: j, Link: l})
			}
		}
	}
	return q
}

// WriteText prints the split, the speed-oblivious splits beside it and
// how much longer they take on the cluster.
func (r *Report) WriteText(w io.Writer) {
	kind := "inference"
	if r.Training {
		kind = "training"
	}
	g := r.Graph
	if g == nil {
		g = &partition.Graph{}
	}
	u := ""
	if g.TimeUnit != "" {
		u = " (" + g.TimeUnit + ")"
	}
	fmt.Fprintf(w, "tessel partition: %s on a cluster of %d devices, %s\n", r.Model, r.Devices, kind)
	fmt.Fprintf(w, "method: contiguous split and device order by dynamic programming, each stage's time on its device (docs/heterogeneous.md)\n\n")
	r.Split.writeStages(w, g.Bytes, u)
	exact := "proven the least"
	if !r.Exact {
		exact = "not proven the least: links differ within device classes"
	}
	fmt.Fprintf(w, "\nmax load       %s per sample on the cluster, the largest device or link load (%s)\n", g.FormatTime(r.Split.MaxLoad), exact)
	fmt.Fprintf(w, "device order   %s\n\n", ints(r.Split.Order()))
	n := 10
	if u != "" {
		n = 14
	}
	fmt.Fprintf(w, "%-10s %*s %8s %5s  %s\n", "split", n, "max load"+u, "vs best", "fits", "layers per stage")
	for _, s := range []*Split{r.Split, r.Oblivious, r.Even} {
		if s == nil {
			continue
		}
		var counts []string
		for _, st := range s.Stages {
			counts = append(counts, fmt.Sprint(st.To-st.From))
		}
		fmt.Fprintf(w, "%-10s %*.2f %7.2f× %5s  %s\n", s.Method, n, s.MaxLoad, s.MaxLoad/math.Max(r.Split.MaxLoad, 1e-300), yesNo(s.Fits), strings.Join(counts, " "))
	}
	if c := r.Converted; c != nil {
		fmt.Fprintf(w, "\nplacement      %d devices, %d blocks, %s a step, the search's step %s (rounding moves a block by up to %.2f%% of the max load, the max load by %.2f%%)\n",
			c.Placement.Devices, len(c.Placement.Blocks), g.FormatStep(c.TimeUnit), g.FormatStep(c.SearchUnit), 100*c.RoundingError, 100*c.MaxLoadError)
	}
}

// writeStages prints the stages; u is the unit of the time columns'
// headers (" (ms)", or "").
func (s *Split) writeStages(w io.Writer, bytes bool, u string) {
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
		fmt.Fprintf(w, "%-6d %-7d %*.2f %*.2f %*.2f %*.2f %12s  %s\n", i, st.Device, n, st.Load, n, st.Compute, n, st.Transfer, n, st.Link, mem, shortNames(st.Layers))
	}
}

func shortNames(ns []string) string {
	if len(ns) <= 4 {
		return strings.Join(ns, " ")
	}
	return fmt.Sprintf("%s %s … %s (%d)", ns[0], ns[1], ns[len(ns)-1], len(ns))
}

func ints(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// PartitionReport is the report as tessel partition gives it, for tessel
// plan: method "cluster", the stages' devices the cluster's, the even and
// speed-oblivious splits as baselines, and the split and placement of the
// stages in pipeline order.
func (r *Report) PartitionReport() *partition.Report {
	g, k := r.Graph, r.Cost
	n := len(k.Model.Layers)
	single := inf
	for d := range r.Cluster.Devices {
		single = min(single, k.Compute(r.Split.Stages[d].Device, 0, n))
	}
	pr := &partition.Report{Model: r.Model, Accelerators: r.Devices, MemoryCap: g.Memory, Training: r.Training, Method: "cluster",
		Contiguous: true, MaxLoad: r.Split.MaxLoad, SingleDevice: single, Split: r.split, Converted: r.Converted, Graph: r.split.Graph}
	for i, st := range r.Split.Stages {
		pr.StageDevices = append(pr.StageDevices, i)
		ss := partition.StageSummary{Stage: i, Device: st.Device, Nodes: st.Layers, Load: st.Load, Compute: st.Compute, Comm: st.Transfer, Memory: st.Memory}
		for _, v := range r.split.Stages[i].Nodes {
			if g.Nodes[v].Backward {
				ss.Backward += NodeTime(g.Nodes[v], k.Cluster.Devices[st.Device])
			} else {
				ss.Forward += NodeTime(g.Nodes[v], k.Cluster.Devices[st.Device])
			}
		}
		pr.Stages = append(pr.Stages, ss)
	}
	for _, s := range []*Split{r.Split, r.Even, r.Oblivious} {
		if s != nil {
			pr.Baselines = append(pr.Baselines, partition.SplitSummary{Method: s.Method, MaxLoad: s.MaxLoad, Fits: s.Fits, Contiguous: true})
		}
	}
	c := r.Converted
	pr.Placement = c.Summary(g)
	return pr
}

// reduce drops every dependency between blocks on the same devices that
// another path of dependencies already implies (a stage's forward to its
// backward, through the later stages): it orders nothing that the path
// does not, and leaves a chain model's placement one chain, as the
// baselines that want a pipeline (1F1B) read it.
func reduce(p *placement.Placement) {
	succ := make([][]int, len(p.Blocks))
	for _, d := range p.Deps {
		succ[d.From] = append(succ[d.From], d.To)
	}
	// reachable reports a path from a to b that does not use the edge a→b.
	reachable := func(a, b int) bool {
		seen := make([]bool, len(p.Blocks))
		var stack []int
		for _, x := range succ[a] {
			if x != b {
				stack = append(stack, x)
			}
		}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x == b {
				return true
			}
			if seen[x] {
				continue
			}
			seen[x] = true
			stack = append(stack, succ[x]...)
		}
		return false
	}
	var keep []placement.Dep
	for _, d := range p.Deps {
		a, b := p.Blocks[d.From], p.Blocks[d.To]
		if slices.Equal(a.Devices, b.Devices) && reachable(d.From, d.To) {
			continue
		}
		keep = append(keep, d)
	}
	p.Deps = keep
}
