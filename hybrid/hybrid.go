// Package hybrid chooses a data- × tensor- × pipeline-parallel layout for
// a layer profile on a cluster (docs/heterogeneous.md; after Wu et al.,
// "Rethinking Dynamic Networks and Heterogeneous Computing with Automatic
// Parallelization", §3–4: enumerate the layouts, prune what cannot fit or
// cannot win, simulate the rest). For every (dp, tp, pp) with dp·tp·pp
// devices:
//
//   - the devices, in the cluster's order, form dp·pp tensor-parallel
//     groups of tp consecutive devices; group s·dp + r is stage s of
//     replica r in Megatron's order;
//   - a layer's time on a group is its slowest member's over tp, plus one
//     ring all-reduce of the layer's output per pass over the group's
//     slowest link (tensor parallelism);
//   - each replica's groups are cut into stages, and the stages given to
//     the groups, by package hetero's dynamic program; its placement is
//     scheduled by tessel's own search (package search) at a modest,
//     deterministic effort, with the transfers between the groups in the
//     model;
//   - the gradients of a stage's layers are all-reduced over the dp
//     replicas once its last backward is done: what the rest of the
//     pipeline's cooldown does not hide adds to the iteration.
//
// Before simulating, a layout is pruned where the split does not fit the
// devices' memories ("memory"), the micro-batches do not divide among
// the replicas in micro-batches of the size tried ("batch"), there are fewer layers than stages ("layers"),
// or its lower bound (the placement's schedule bound) is above the
// least upper bound of all layouts (1F1B's time on its placement:
// "bound"). The layouts left are evaluated in parallel, each alone, so
// the result does not depend on the order or the number of workers.
//
// Megatron's layout — the even split by layer count, the groups in the
// cluster's order, 1F1B — is evaluated for every (dp, tp, pp) whose
// tensor-parallel groups lie within a node; the best of them is the
// baseline.
package hybrid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// DefaultEffort caps each solver call of a layout's schedule search
// (search.Options' Effort, PhaseEffort and RefineEffort), as tessel
// replan does.
const DefaultEffort = search.ReplanEffort

// Options configure Plan.
type Options struct {
	// MicroBatches is the number of samples (the profile's unit) of one
	// iteration over all replicas: micro-batches of size 1, of which a
	// replica runs MicroBatches / dp.
	MicroBatches int
	// MicroBatchSizes are the micro-batch sizes tried, in samples: with
	// size b a replica runs MicroBatches / (dp·b) micro-batches, each b
	// times a sample's computation, tensor-parallel all-reduce data,
	// transfers and activations (latencies once). nil: 1 only.
	MicroBatchSizes []int
	// TimeUnit is the model time of one step of the cluster's links;
	// 0: partition.AutoTimeUnit over the layers' times on device 0.
	TimeUnit float64
	// Effort caps each solver call (0: DefaultEffort).
	Effort int
	// Jobs is the number of layouts evaluated at once (0: GOMAXPROCS).
	Jobs int
	// Degrees, when not nil, keeps only the layouts it accepts.
	Degrees func(dp, tp, pp int) bool
	// Chunks are the stages per device tried (virtual stages: with v, a
	// replica's model is cut into v·pp stages, stage i on group i mod pp,
	// hetero.Cost.Interleaved, and interleaved 1F1B is its upper bound).
	// nil: 1 only, and the layouts do not list their chunks.
	Chunks []int
}

// Breakdown says where a layout's iteration time goes, on its slowest
// replica's busiest device.
type Breakdown struct {
	Compute   float64 `json:"compute"`    // its layers' computation
	TPComm    float64 `json:"tp_comm"`    // tensor parallelism's all-reduces
	Transfer  float64 `json:"transfer"`   // the profile's transfers ("comm") at its stage's ends
	Bubble    float64 `json:"bubble"`     // the pipeline's idle time on that device
	DPComm    float64 `json:"dp_comm"`    // the largest stage's gradient all-reduce
	DPExposed float64 `json:"dp_exposed"` // what of the gradient all-reduces the cooldown does not hide
}

// Layout is one evaluated (dp, tp, pp).
type Layout struct {
	DP             int     `json:"dp"`
	TP             int     `json:"tp"`
	PP             int     `json:"pp"`
	MicroBatches   int     `json:"micro_batches"`    // per replica
	MicroBatchSize int     `json:"micro_batch_size"` // in samples
	Chunks         int     `json:"chunks,omitempty"` // stages per device (with Options.Chunks)
	Time           float64 `json:"time"`             // predicted iteration time, the profile's unit
	// Pipeline is the slowest replica's schedule makespan; Time adds the
	// exposed gradient all-reduce.
	Pipeline  float64   `json:"pipeline"`
	Breakdown Breakdown `json:"breakdown"`
	// Schedule says what made the pipeline's schedule: "search" (tessel's
	// search on the placement), "1f1b", "1f1b-interleaved" or, where
	// those do not fit the memory, "gpipe-rounds" (GPipe in rounds as
	// large as the memory holds).
	Schedule string `json:"schedule"`
	// Stages are replica 0's layers per stage and Groups the devices of
	// each stage's group.
	Stages [][]string `json:"stages"`
	Groups [][]int    `json:"groups"`
	// Bound is the layout's lower bound.
	Bound float64 `json:"lower_bound"`
}

// Pruned is a layout left out without a simulation.
type Pruned struct {
	DP             int    `json:"dp"`
	TP             int    `json:"tp"`
	PP             int    `json:"pp"`
	MicroBatchSize int    `json:"micro_batch_size"`
	Chunks         int    `json:"chunks,omitempty"`
	Reason         string `json:"reason"` // memory, batch, layers or bound
	Detail         string `json:"detail"`
}

// Result is every layout's outcome.
type Result struct {
	Model        string  `json:"model"`
	Devices      int     `json:"devices"`
	MicroBatches int     `json:"micro_batches"`
	TimeUnit     float64 `json:"time_unit"`
	// Unit is the model's time unit ("ms"; "" where it names none): the
	// unit of every time of the result.
	Unit        string         `json:"unit,omitempty"`
	ChunksTried []int          `json:"chunks_tried,omitempty"` // Options.Chunks
	Plans       []Layout       `json:"plans"`                  // evaluated, least time first
	Pruned      []Pruned       `json:"pruned"`
	PrunedBy    map[string]int `json:"pruned_by"`
	// Baseline is Megatron's layout at its best degrees (nil where none
	// fits); Best is Plans[0].
	Baseline *Layout `json:"baseline"`
	Best     *Layout `json:"best"`
}

// ErrNoLayout says that every layout was pruned.
var ErrNoLayout = errors.New("no layout fits")

type candidate struct {
	dp, tp, pp int
	b          int        // micro-batch size
	v          int        // stages per device
	replicas   []*replica // one per distinct replica
	ub, lb     float64
	megatron   *Layout
	pruned     *Pruned
	out        *Layout
}

// Plan evaluates every layout of g on c.
func Plan(ctx context.Context, g *partition.Graph, c *cluster.Cluster, opt Options) (*Result, error) {
	if opt.MicroBatches < 1 {
		return nil, fmt.Errorf("micro-batches must be at least 1, got %d", opt.MicroBatches)
	}
	m, err := hetero.NewModel(g)
	if err != nil {
		return nil, err
	}
	sizes := opt.MicroBatchSizes
	if len(sizes) == 0 {
		sizes = []int{1}
	}
	for _, b := range sizes {
		if b < 1 {
			return nil, fmt.Errorf("micro-batch sizes must be at least 1, got %d", b)
		}
	}
	chunks := opt.Chunks
	if len(chunks) == 0 {
		chunks = []int{1}
	}
	for _, v := range chunks {
		if v < 1 {
			return nil, fmt.Errorf("stages per device must be at least 1, got %d", v)
		}
	}
	if opt.Effort == 0 {
		opt.Effort = DefaultEffort
	}
	if opt.Jobs <= 0 {
		opt.Jobs = runtime.GOMAXPROCS(0)
	}
	unit := opt.TimeUnit
	if unit == 0 {
		var ts []float64
		for _, v := range g.Nodes {
			ts = append(ts, hetero.NodeTime(v, c.Devices[0]))
		}
		unit = partition.AutoTimeUnit(ts)
	}
	// The cluster's times in the model's unit, then in steps of unit, as
	// the layouts' arithmetic takes them.
	if c, err = hetero.InModelUnit(g, c); err != nil {
		return nil, err
	}
	c = c.Clone()
	c.Scale(1 / unit)
	c.TimeUnit = ""
	D := len(c.Devices)
	res := &Result{Model: g.Name, Devices: D, MicroBatches: opt.MicroBatches, TimeUnit: unit, Unit: g.TimeUnit, PrunedBy: map[string]int{}, ChunksTried: opt.Chunks}
	var cands []*candidate
	for tp := 1; tp <= D; tp++ {
		for pp := 1; pp <= D/tp; pp++ {
			if D%(tp*pp) != 0 {
				continue
			}
			dp := D / (tp * pp)
			if opt.Degrees != nil && !opt.Degrees(dp, tp, pp) {
				continue
			}
			for _, b := range sizes {
				for _, v := range chunks {
					cands = append(cands, &candidate{dp: dp, tp: tp, pp: pp, b: b, v: v})
				}
			}
		}
	}
	// Prepare every layout (splits, 1F1B, bounds) in parallel, then
	// prune against the least upper bound, then search the rest.
	run := func(f func(*candidate)) {
		var wg sync.WaitGroup
		var pan safego.Panic
		next := make(chan *candidate)
		for range min(opt.Jobs, max(1, len(cands))) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for x := range next {
					pan.Do(func() { f(x) })
				}
			}()
		}
		for _, x := range cands {
			next <- x
		}
		close(next)
		wg.Wait()
		pan.Repanic()
	}
	run(func(x *candidate) { x.prepare(ctx, m, c, unit, opt) })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ub := math.Inf(1)
	for _, x := range cands {
		if x.pruned == nil {
			ub = min(ub, x.ub)
		}
	}
	for _, x := range cands {
		if x.pruned == nil && x.lb > ub*(1+1e-9) {
			x.pruned = &Pruned{Reason: "bound", Detail: fmt.Sprintf("lower bound %.4g above the least upper bound %.4g (1F1B's time, or GPipe in rounds where 1F1B does not fit)", x.lb, ub)}
		}
	}
	run(func(x *candidate) {
		if x.pruned == nil {
			x.evaluate(ctx, unit, opt)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, x := range cands {
		if x.pruned != nil {
			x.pruned.DP, x.pruned.TP, x.pruned.PP, x.pruned.MicroBatchSize = x.dp, x.tp, x.pp, x.b
			if opt.Chunks != nil {
				x.pruned.Chunks = x.v
			}
			res.Pruned = append(res.Pruned, *x.pruned)
			res.PrunedBy[x.pruned.Reason]++
		} else {
			if opt.Chunks != nil {
				x.out.Chunks = x.v
			}
			res.Plans = append(res.Plans, *x.out)
		}
		if x.megatron != nil && (res.Baseline == nil || x.megatron.Time < res.Baseline.Time) {
			res.Baseline = x.megatron
		}
	}
	sort.SliceStable(res.Plans, func(i, j int) bool {
		a, b := res.Plans[i], res.Plans[j]
		if a.Time != b.Time {
			return a.Time < b.Time
		}
		return less3(a, b)
	})
	if len(res.Plans) == 0 {
		return res, fmt.Errorf("%w: %s", ErrNoLayout, PrunedText(res.PrunedBy))
	}
	res.Best = &res.Plans[0]
	return res, nil
}

func less3(a, b Layout) bool {
	if a.TP != b.TP {
		return a.TP < b.TP
	}
	if a.PP != b.PP {
		return a.PP < b.PP
	}
	if a.DP != b.DP {
		return a.DP < b.DP
	}
	if a.MicroBatchSize != b.MicroBatchSize {
		return a.MicroBatchSize < b.MicroBatchSize
	}
	return a.Chunks < b.Chunks
}

// PrunedText counts the pruned layouts by reason ("3 by memory, 1 by
// bound"), as the error and the report say it.
func PrunedText(by map[string]int) string {
	var parts []string
	for _, k := range []string{"memory", "batch", "layers", "bound"} {
		if by[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d by %s", by[k], k))
		}
	}
	if len(parts) == 0 {
		return "none pruned"
	}
	return strings.Join(parts, ", ")
}

// replica is one replica's pipeline: its groups as devices of a virtual
// cluster, its split and placement.
type replica struct {
	groups   [][]int // devices per group, in the cluster's order (stage s of Megatron's layout: groups[s])
	model    *hetero.Model
	cost     *hetero.Cost
	split    *hetero.Split
	p        *placement.Placement // the split's placement on its cluster
	unit     float64              // the model time of one step of p
	compute  []float64            // per layer and group: computation (over tp)
	tpComm   []float64            // per layer and group: tensor-parallel all-reduces
	arGrad   []float64            // per stage (pipeline order): gradient all-reduce time
	nGroups  int
	ones     *schedule.Schedule // 1F1B on p (interleaved 1F1B with chunks; GPipe in rounds where those do not fit)
	onesName string             // the Layout.Schedule of ones
	chunks   int                // stages per group
	megatron *Layout
}

func (x *candidate) prepare(ctx context.Context, m *hetero.Model, c *cluster.Cluster, unit float64, opt Options) {
	n := len(m.Layers)
	if opt.MicroBatches%(x.dp*x.b) != 0 {
		x.pruned = &Pruned{Reason: "batch", Detail: fmt.Sprintf("%d samples over %d replicas in micro-batches of %d", opt.MicroBatches, x.dp, x.b)}
		return
	}
	if n < x.pp*x.v {
		x.pruned = &Pruned{Reason: "layers", Detail: fmt.Sprintf("%d layers for %d stages", n, x.pp*x.v)}
		return
	}
	mb := opt.MicroBatches / (x.dp * x.b)
	seen := map[string]*replica{}
	x.ub, x.lb = 0, 0
	megatronOK := x.v == 1 && withinNodes(c, x.tp)
	var mega *Layout
	for r := range x.dp {
		var groups [][]int
		for s := range x.pp {
			j := s*x.dp + r
			var g []int
			for k := range x.tp {
				g = append(g, j*x.tp+k)
			}
			groups = append(groups, g)
		}
		key := signature(c, groups)
		rep, ok := seen[key]
		if !ok {
			var err error
			rep, err = newReplica(ctx, m, c, groups, shape{tp: x.tp, dp: x.dp, b: x.b, v: x.v}, unit)
			if err != nil {
				x.pruned = &Pruned{Reason: "memory", Detail: err.Error()}
				return
			}
			if err := rep.prepare(mb); err != nil {
				x.pruned = &Pruned{Reason: "memory", Detail: err.Error()}
				return
			}
			if megatronOK {
				rep.megatron = rep.megatronLayout(mb)
			}
			seen[key] = rep
			x.replicas = append(x.replicas, rep)
		}
		t, _ := rep.time(rep.ones, mb)
		x.ub = max(x.ub, t)
		// The bound without the budgets, a relaxation: the budgets'
		// bound on the exact steps costs too much for a pruning bound.
		free := rep.p.Clone()
		free.Capacities = nil
		x.lb = max(x.lb, float64(rules.LowerBounds(spec.New(free, mb)).Makespan)*rep.unit)
		if megatronOK {
			if rep.megatron == nil {
				megatronOK = false
			} else if mega == nil || rep.megatron.Time > mega.Time {
				mega = rep.megatron
			}
		}
	}
	if megatronOK && mega != nil {
		l := *mega
		l.DP, l.TP, l.PP, l.MicroBatches, l.MicroBatchSize = x.dp, x.tp, x.pp, mb, x.b
		if opt.Chunks != nil {
			l.Chunks = 1
		}
		x.megatron = &l
	}
}

// withinNodes reports whether every tensor-parallel group of tp
// consecutive devices lies within one node.
func withinNodes(c *cluster.Cluster, tp int) bool {
	for j := 0; j < len(c.Devices); j += tp {
		for k := j; k < j+tp; k++ {
			if c.Devices[k].Node != c.Devices[j].Node {
				return false
			}
		}
	}
	return true
}

// signature identifies a replica up to what its pipeline sees: its
// groups' devices' kinds and the links among them, in order.
func signature(c *cluster.Cluster, groups [][]int) string {
	var b strings.Builder
	for _, g := range groups {
		for _, d := range g {
			dev := c.Devices[d]
			fmt.Fprintf(&b, "%g/%s/%g/%g/%g/%g|", dev.Speed, dev.Type, dev.PeakFLOPs, dev.MemoryBandwidth, dev.MemoryBytes, float64(dev.Memory))
		}
		b.WriteString(";")
	}
	for i, g := range groups {
		for j, h := range groups {
			if i != j {
				l := worstLink(c, g, h)
				fmt.Fprintf(&b, "%g,%g;", l.Latency, l.PerUnit)
			}
		}
		l := worstLink(c, g, g)
		fmt.Fprintf(&b, "%g,%g;", l.Latency, l.PerUnit)
	}
	return b.String()
}

// worstLink is the slowest of the links between devices of a and b
// (distinct devices): the largest latency and the largest time per unit.
func worstLink(c *cluster.Cluster, a, b []int) cluster.Link {
	var w cluster.Link
	for _, x := range a {
		for _, y := range b {
			if x != y {
				l := c.Link(x, y)
				w.Latency, w.PerUnit = max(w.Latency, l.Latency), max(w.PerUnit, l.PerUnit)
			}
		}
	}
	return w
}

// allReduce is a ring all-reduce of size z among k members over link l,
// in the link's steps: 2(k−1) latencies and 2(k−1)/k of the data.
func allReduce(l cluster.Link, z float64, k int) float64 {
	if k < 2 {
		return 0
	}
	return 2*float64(k-1)*l.Latency + 2*float64(k-1)/float64(k)*z*l.PerUnit
}
