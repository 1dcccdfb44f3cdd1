package hybrid

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// newReplica builds replica groups' pipeline: the model as the groups run
// it (a type per group), the virtual cluster of the groups, the split and
// its placement.
func newReplica(ctx context.Context, m *hetero.Model, c *cluster.Cluster, groups [][]int, sh shape, unit float64) (*replica, error) {
	tp, dp, b, v := sh.tp, sh.dp, sh.b, sh.v
	g := m.Graph
	G := len(groups)
	h := *g
	h.Nodes = append([]partition.Node(nil), g.Nodes...)
	h.Accelerators, h.CPUs = G, 0
	// Per micro-batch of b samples on one of tp shards.
	scale := func(xs []float64, f float64) []float64 {
		if xs == nil {
			return nil
		}
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x * f
		}
		return out
	}
	shard, mb := 1/float64(tp), float64(b)/float64(tp)
	h.Static, h.Activations, h.Checkpoints, h.GradSizes = scale(g.Static, shard), scale(g.Activations, mb), scale(g.Checkpoints, mb), scale(g.GradSizes, shard)
	h.OutputSizes = scale(g.OutputSizes, float64(b))
	n := len(m.Layers)
	rep := &replica{groups: groups, nGroups: G, compute: make([]float64, n*G), tpComm: make([]float64, n*G)}
	for v := range h.Nodes {
		x := &h.Nodes[v]
		if v < len(g.Static) && v < len(g.Activations) && x.Size == g.Static[v]+g.Activations[v] {
			x.Size = h.Static[v] + h.Activations[v]
		} else {
			x.Size *= mb
		}
		x.FLOPs, x.MemoryAccess = 0, 0
		x.TypeTimes = map[string]float64{}
		z := float64(b)
		if x.Layer < len(g.OutputSizes) {
			z = h.OutputSizes[x.Layer]
		}
		for j, grp := range groups {
			slow := 0.0
			for _, d := range grp {
				slow = max(slow, hetero.NodeTime(g.Nodes[v], c.Devices[d]))
			}
			comp := slow * float64(b) / float64(tp)
			ar := allReduce(worstLink(c, grp, grp), z, tp) * unit
			x.TypeTimes[groupType(j)] = comp + ar
			rep.compute[x.Layer*G+j] += comp
			rep.tpComm[x.Layer*G+j] += ar
		}
	}
	vc := &cluster.Cluster{QueuedLinks: c.QueuedLinks}
	for j, grp := range groups {
		dev := cluster.Device{Speed: 1, Type: groupType(j), Node: c.Devices[grp[0]].Node, Memory: math.MaxInt}
		for _, d := range grp {
			x := c.Devices[d]
			dev.Memory = min(dev.Memory, x.Memory)
			if x.MemoryBytes > 0 && (dev.MemoryBytes == 0 || x.MemoryBytes < dev.MemoryBytes) {
				dev.MemoryBytes = x.MemoryBytes
			}
			if x.Node != dev.Node {
				dev.Node = placement.MaxDevices - 1 - j // a node of its own
			}
		}
		vc.Devices = append(vc.Devices, dev)
	}
	hm, err := hetero.NewModel(&h)
	if err != nil {
		return nil, err
	}
	uc := hetero.AutoTimeUnit(hm, vc)
	// Links between groups, their slowest member pairs', in the model's
	// time (hetero's).
	var links []cluster.Pair
	uniform := true
	for i := range G {
		for j := i + 1; j < G; j++ {
			l := worstLink(c, groups[i], groups[j])
			l.Latency, l.PerUnit = l.Latency*unit, l.PerUnit*unit
			links = append(links, cluster.Pair{From: i, To: j, Link: l})
			uniform = uniform && l == links[0].Link
		}
	}
	if uniform && len(links) > 0 {
		vc.Default = links[0].Link
	} else {
		vc.Pairs = links
	}
	cost := hetero.NewCost(hm, vc, uc)
	// The layouts' placements time every block and transfer within half
	// a percent (a link of 0.17 ms costs 0.17 ms, not a step of uc); the
	// search runs on their coarse copy at uc (package exact).
	cost.Step = 0
	split, _, err := cost.Best(ctx)
	if err != nil {
		return nil, err
	}
	if v > 1 {
		// v stages per group, in the order of the groups the split
		// chose.
		split = cost.Interleaved("interleaved", split.Order(), v)
		if split == nil {
			return nil, fmt.Errorf("%d layers for %d stages", len(hm.Layers), v*G)
		}
		if !split.Fits {
			return nil, fmt.Errorf("%d stages per device do not fit the groups' memories", v)
		}
	}
	rep.model, rep.cost, rep.split, rep.chunks = hm, cost, split, v
	p, err := rep.place(split)
	if err != nil {
		return nil, err
	}
	rep.p, rep.unit = p, stepOf(p)
	// Each stage's gradients, all-reduced over the replicas' groups that
	// hold the same layers: the slowest link among them (a group's
	// stages together, where it holds several).
	P := len(split.Stages) / v
	zs := make([]float64, P)
	for i, st := range split.Stages {
		z := 0.0
		for l := st.From; l < st.To; l++ {
			if l < len(h.GradSizes) {
				z += h.GradSizes[l]
			}
		}
		zs[i%P] += z
	}
	for i, z := range zs {
		j := groupIndex(groups[split.Stages[i].Device][0], tp, dp) // Megatron's stage of the group
		var peers []int
		for r := range dp {
			for k := range tp {
				peers = append(peers, ((j*dp)+r)*tp+k)
			}
		}
		rep.arGrad = append(rep.arGrad, allReduce(worstLink(c, peers, peers), z, dp)*unit)
	}
	return rep, nil
}

// shape is what a layout makes of each replica: its tensor- and
// data-parallel degrees, micro-batch size b and stages per group v.
type shape struct{ tp, dp, b, v int }

func groupType(j int) string { return fmt.Sprintf("group%d", j) }

// groupIndex is the Megatron stage s of the group whose first device is d
// (group s·dp + r).
func groupIndex(d, tp, dp int) int { return d / tp / dp }

// stepOf is the model time of one step of a replica's placement (its
// Units' Step: every split's placement states its own, place checks it).
func stepOf(p *placement.Placement) float64 { return p.Units.Step }

// place converts a split of the replica to a placement on its cluster,
// with the devices' budgets where the model has memory.
func (rep *replica) place(split *hetero.Split) (*placement.Placement, error) {
	conv, vcl, sp, err := rep.cost.Placement(split, 0)
	if err != nil {
		return nil, err
	}
	p, err := vcl.Apply(conv.Placement)
	if err != nil {
		return nil, err
	}
	if p.Units == nil || !(p.Units.Step > 0) {
		return nil, fmt.Errorf("the placement of the split states no step")
	}
	mem, err := conv.Memory(sp, vcl.DeviceMemoryBytes())
	if err != nil {
		return nil, err
	}
	if mem != nil {
		p.Capacities = make([]int, p.Devices)
		for d, x := range mem {
			p.Capacities[d] = x.Budget
		}
	}
	return p, nil
}

// prepare builds 1F1B's schedule of mb micro-batches (interleaved 1F1B
// with chunks), the layout's upper bound; where that does not fit the
// budgets, GPipe in rounds as large as they hold, so that a layout that
// fits keeps an upper bound (nil where not even that fits).
func (rep *replica) prepare(mb int) error {
	build, name := baseline.OneFOneB, "1f1b"
	if rep.chunks > 1 {
		build, name = baseline.Interleaved, "1f1b-interleaved"
	}
	s, err := build(spec.New(rep.p, mb))
	switch {
	case err == nil:
		rep.ones, rep.onesName = s, name
		return nil
	case !errors.Is(err, baseline.ErrOverBudget) && !errors.Is(err, baseline.ErrNotApplicable):
		return err
	}
	if s, err := baseline.GPipeRounds(spec.New(rep.p, mb)); err == nil {
		rep.ones, rep.onesName = s, "gpipe-rounds"
	}
	return nil
}

// time is schedule s's iteration time (the profile's unit): its makespan,
// or later where a stage's gradient all-reduce, started when its last
// backward ends, ends after it; and where the time goes.
func (rep *replica) time(s *schedule.Schedule, mb int) (float64, Breakdown) {
	if s == nil {
		return math.Inf(1), Breakdown{}
	}
	p := s.Placement
	unit := stepOf(p)
	ms := float64(schedule.Makespan(s)) * unit
	end := make([]float64, p.Devices)
	busy := make([]float64, p.Devices)
	for _, in := range s.Instances {
		b := p.Blocks[in.Block]
		for _, d := range b.Devices {
			end[d] = max(end[d], float64(in.Start+b.Time)*unit)
			busy[d] += float64(b.Time) * unit
		}
	}
	t := ms
	var br Breakdown
	for d := range p.Devices {
		if d < len(rep.arGrad) {
			t = max(t, end[d]+rep.arGrad[d])
			br.DPComm = max(br.DPComm, rep.arGrad[d])
		}
	}
	br.DPExposed = t - ms
	// The busiest device: its computation, all-reduces and transfers.
	top := 0
	for d := range busy {
		if busy[d] > busy[top] {
			top = d
		}
	}
	// The busiest device's stages (one, or its chunks).
	var mine []hetero.Stage
	for i, st := range rep.split.Stages {
		if i%p.Devices == top {
			mine = append(mine, st)
		}
	}
	for _, st := range mine {
		for l := st.From; l < st.To; l++ {
			br.Compute += rep.compute[l*rep.nGroups+st.Device] * float64(mb)
			br.TPComm += rep.tpComm[l*rep.nGroups+st.Device] * float64(mb)
		}
	}
	// The model's times, scaled to the placement's rounded steps, so that
	// computation, all-reduces, transfers and bubble add up to the
	// makespan.
	model := br.Compute + br.TPComm
	for _, st := range mine {
		if st.From > 0 {
			model += rep.model.Comm(st.From-1) * float64(mb)
		}
		if st.To < len(rep.model.Layers) {
			model += rep.model.Comm(st.To-1) * float64(mb)
		}
	}
	if model > 0 {
		f := busy[top] / model
		br.Compute, br.TPComm = br.Compute*f, br.TPComm*f
	}
	br.Transfer = max(0, busy[top]-br.Compute-br.TPComm)
	br.Bubble = max(0, ms-busy[top])
	return t, br
}

// megatronLayout is Megatron's layout on this replica: the even split by
// layer count, stage s on group s, 1F1B; nil where it does not fit.
func (rep *replica) megatronLayout(mb int) *Layout {
	G := rep.nGroups
	order := make([]int, G)
	for i := range order {
		order[i] = i
	}
	split := rep.cost.Evaluate("megatron", hetero.EvenCuts(len(rep.model.Layers), G), order)
	if !split.Fits {
		return nil
	}
	p, err := rep.place(split)
	if err != nil {
		return nil
	}
	s, err := baseline.OneFOneB(spec.New(p, mb))
	if err != nil {
		return nil
	}
	saved := rep.split
	rep.split = split
	t, br := rep.time(s, mb)
	rep.split = saved
	l := &Layout{Time: t, Pipeline: float64(schedule.Makespan(s)) * stepOf(p), Breakdown: br, Schedule: "1f1b"}
	l.Stages, l.Groups = rep.describe(split)
	return l
}

func (rep *replica) describe(split *hetero.Split) ([][]string, [][]int) {
	var stages [][]string
	var groups [][]int
	for _, st := range split.Stages {
		stages = append(stages, st.Layers)
		groups = append(groups, rep.groups[st.Device])
	}
	return stages, groups
}

// evaluate searches every distinct replica's schedule and keeps the
// better of the search's and 1F1B's for each; the layout's time is its
// slowest replica's.
func (x *candidate) evaluate(ctx context.Context, unit float64, opt Options) {
	mb := opt.MicroBatches / (x.dp * x.b)
	out := &Layout{DP: x.dp, TP: x.tp, PP: x.pp, MicroBatches: mb, MicroBatchSize: x.b, Bound: x.lb}
	first := true
	for _, rep := range x.replicas {
		best, br := rep.time(rep.ones, mb)
		how, sched := rep.onesName, rep.ones
		e := opt.Effort
		res, err := exact.Run(ctx, spec.Spec{Placement: rep.p, MicroBatches: mb}, search.Options{Jobs: 1, Effort: e, PhaseEffort: e, RefineEffort: e, RefineGreedyOnly: true, LNSSteps: -1})
		if err == nil && verify.Schedule(res.Schedule) == nil {
			if t, b := rep.time(res.Schedule, mb); t < best {
				best, br, how, sched = t, b, "search", res.Schedule
			}
		}
		if math.IsInf(best, 1) {
			x.pruned = &Pruned{Reason: "memory", Detail: "no schedule found under the budgets (neither 1F1B's nor the search's repetend fits)"}
			return
		}
		if first || best > out.Time {
			out.Time, out.Breakdown, out.Schedule = best, br, how
			out.Pipeline = float64(schedule.Makespan(sched)) * stepOf(sched.Placement)
			if first {
				out.Stages, out.Groups = rep.describe(rep.split)
			}
			first = false
		}
	}
	x.out = out
}
