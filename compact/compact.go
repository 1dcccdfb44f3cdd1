package compact

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// deviceList formats a device group: "device 2" or "devices [0, 1]".
func deviceList(devs []int) string {
	if len(devs) == 1 {
		return fmt.Sprintf("device %d", devs[0])
	}
	return "devices " + schedule.IntList(devs)
}

// Keep is what Compact keeps of a schedule to be.
type Keep struct {
	// Orders is every device's order of its instances (Orders
	// gives a schedule's). An instance on a device group appears in the
	// order of each member device, and nowhere else.
	Orders [][]schedule.Ref
	// Pairs are overlapped forwards and backwards (placement's Overlap):
	// the instances of a pair start together and occupy their devices
	// for the pair's time, so they are consecutive in each device's
	// order (the forward first, then the whole backward). A pair the
	// placement's rule does not allow, an instance in two pairs, or pairs
	// with channels are errors.
	Pairs []schedule.Pair
	// From, when set, is a schedule of the spec's placement whose orders
	// Compact keeps instead of Orders and Pairs: of its instances, of its
	// decisions (offload, reload, recompute) on every device and host
	// channel, and of its memory changes on every device. It must verify
	// without a latency budget, and the result is verified.
	From *schedule.Schedule
	// Release, when set, is the earliest start of some instances (a
	// rule's wait that is no dependency: FSDP's gathered parameters).
	// Not with From or a latency budget.
	Release map[schedule.Ref]int
	// Built says From was just built by the caller, whole (every
	// instance, every decision naming one): Compact does not verify it
	// first when it decides and the spec has no latency budget. The
	// result is verified all the same, so a From that breaks a rule is
	// still an error; the saving is one verification of every list
	// schedule that decides.
	Built bool
}

// Compact is the one re-timing every builder uses — the baselines on
// their orders, the constructions, the search's assembled schedules, the
// refinement's windows, a schedule moved onto another cluster (OnCluster)
// — so that a rule of the timing model is applied the same way
// everywhere. It returns the schedule of the spec that keeps what keep
// says with every instance as early as the rules allow (since per-device
// orders alone fix memory, it never changes peak memory):
//
//   - the dependencies (placement's Delay): the longest path from time 0
//     over the DAG whose edges are consecutive instances of each device
//     order (weighted by the first one's time) and the dependencies of
//     each micro-batch, in O(V+E); with queued links (placement's QueuedLinks) a
//     tensor also waits for the transfers queued before it on its links,
//     as the verifier times them;
//   - overlapped pairs (Keep.Pairs);
//   - under the spec's latency budget (placement's "Latency": the sink of
//     micro-batch n ends at most Latency after its source starts), an
//     edge from every sink back to every source of its micro-batch,
//     weighted t_sink − Latency: the starts are then the longest paths of
//     a graph with negative edges, found by relaxation; orders that admit
//     no schedule within the budget are an error. A micro-batch is
//     delayed only as much as its budget asks;
//   - with Keep.From, the decisions' timing rule (placement's
//     EarliestOffload, EarliestReload, LatestReload, EarliestRecompute,
//     LatestRecompute) and one move at a time on each host channel, as
//     difference constraints solved together with the rest. Placements
//     whose links carry one transfer at a time are not compacted with
//     decisions (an error).
//
// It builds one system of difference constraints (compact/system) from
// what it keeps — a variable per instance, the dependencies and the
// device orders — and asks the rules, every rule of rules.All in the
// list's order, as the verifier and the bounds do: what they refuse
// with what is kept (rule.Refuser: rule/latency, rule/hostchan,
// rule/fsdp), which instances are one variable (rule.Merger:
// rule/pairs's overlapped pairs), their variables and constraints
// (rule.Retimer: the decisions' variables, timing and host channels,
// rule/hostchan; the memory orders, rule/memory; the link queues,
// rule/links; the release times, rule/fsdp), their constraints back in
// time (rule.BackRetimer: the latency budget's edges, rule/latency) and,
// where their waits depend on the times, the settling of the compaction
// under a latency budget (rule.Settler: rule/links). Which system is
// built is what keep holds (a schedule's decisions, or device orders);
// whether it is solved by one topological pass or by relaxation is
// whether a rule added constraints back.
//
// When the orders come from a valid schedule (Orders) the result
// is valid and ends no later. Inconsistent orders are an error naming
// the instances: an instance out of range, listed twice on a device,
// listed on a device it does not occupy, missing from a device it
// occupies, or a cycle (for example two devices ordering two group blocks
// differently). The instances come back in file order (Sort).
//
// Without Keep.From the result is the spec's schedule of those instances
// and pairs, not yet verified (callers verify it, under the budget they
// mean); with it, the result is From's spec under this spec's latency
// budget, verified.
func Compact(sp spec.Spec, keep Keep) (*schedule.Schedule, error) {
	t := &rule.Retiming{Spec: sp, Release: keep.Release, From: keep.From, Pairs: keep.Pairs}
	if keep.From == nil || keep.Release != nil {
		// What the rules cannot time together, before anything is built
		// (a schedule kept without release times is asked once it is
		// verified: decisionsLatency, decisionsUnchecked).
		if err := refuse(t); err != nil {
			return nil, err
		}
	}
	if keep.From != nil {
		if keep.Built && sp.Latency <= 0 && len(keep.From.Decisions) > 0 && keep.From.Placement != nil && refuse(t) == nil {
			// decisionsUnchecked verifies what it returns.
			return decisionsUnchecked(keep.From)
		}
		return decisionsLatency(keep.From, sp.Latency)
	}
	ins, err := orders(sp, keep)
	if err != nil {
		return nil, err
	}
	return &schedule.Schedule{Spec: sp, Instances: ins, Pairs: keep.Pairs}, nil
}

// refuse is the first refusal of the rules that refuse what a
// compaction keeps (rule.Refuser), in the list's order, with compact's
// prefix.
func refuse(t *rule.Retiming) error {
	for _, r := range rules.All() {
		if rf, ok := r.(rule.Refuser); ok {
			if err := rf.Refuse(t); err != nil {
				return fmt.Errorf("compact: %w", err)
			}
		}
	}
	return nil
}

// constrain adds to t the constraints of every rule of the list that
// re-times (rule.Retimer), in the list's order.
func constrain(t *rule.Retiming) error {
	for _, r := range rules.All() {
		if rt, ok := r.(rule.Retimer); ok {
			if err := rt.Constrain(t); err != nil {
				return fmt.Errorf("compact: %s: %w", r.Name(), err)
			}
		}
	}
	return nil
}

// constrainBack adds to t the constraints that point back in time of
// every rule of the list that has them (rule.BackRetimer), in the list's
// order, and returns how many they added.
func constrainBack(t *rule.Retiming) (int, error) {
	before := len(t.Sys.Cons)
	for _, r := range rules.All() {
		if rt, ok := r.(rule.BackRetimer); ok {
			if err := rt.ConstrainBack(t); err != nil {
				return 0, fmt.Errorf("compact: %s: %w", r.Name(), err)
			}
		}
	}
	return len(t.Sys.Cons) - before, nil
}

// solve adds the constraints of the rules that re-time for sp (with the
// release times kept, by instance) and returns the least start of every
// variable (release[v] at least, where given: by variable): the
// system's topological pass, with the rules' visit, or an error naming
// a cycle.
func (g *graph) solve(sp spec.Spec, keep map[schedule.Ref]int, release []int) ([]int, error) {
	t := &rule.Retiming{Spec: sp, Release: keep, Var: g.node, Ref: g.ref, Sys: &g.sys}
	if err := constrain(t); err != nil {
		return nil, err
	}
	if release != nil {
		g.sys.Floor = release
	}
	start, ok := g.sys.Topological(t.Visit)
	if !ok {
		return nil, fmt.Errorf("compact: the orders contradict each other or the dependencies: %s", g.cycleText())
	}
	return start, nil
}

// newGraph is the system of orders and pairs: their variables, the
// device orders and the dependencies, checked as they are read.
func newGraph(p *placement.Placement, n int, orders [][]schedule.Ref, pairs []schedule.Pair) (*graph, error) {
	if p == nil {
		return nil, fmt.Errorf("compact: no placement")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	if n < 0 || n > schedule.MaxMicroBatches {
		return nil, fmt.Errorf("compact: micro-batch count %d out of range 0..%d", n, schedule.MaxMicroBatches)
	}
	if len(orders) != p.Devices {
		return nil, fmt.Errorf("compact: %d device orders for %d devices", len(orders), p.Devices)
	}
	g := &graph{p: p, n: n, rep: make([]int, len(p.Blocks)*n)}
	g.sys.Vars = len(g.rep)
	// Presized: at 10,000 micro-batches the growing slices cost more
	// than the topological pass.
	edges := len(p.Deps) * n
	for _, o := range orders {
		edges += len(o)
	}
	g.sys.Cons, g.via = make([]system.Constraint, 0, edges), make([]int, 0, edges)
	for v := range g.rep {
		g.rep[v] = v
	}
	if err := g.merge(pairs); err != nil {
		return nil, err
	}
	if err := g.orderEdges(orders); err != nil {
		return nil, err
	}
	g.dependencyEdges()
	return g, nil
}

// instances is every instance at its pair's start, in file order.
func (g *graph) instances(start []int) []schedule.Instance {
	out := make([]schedule.Instance, len(start))
	for v := range out {
		r := g.ref(v)
		out[v] = schedule.Instance{Block: r.Block, Micro: r.Micro, Start: start[g.rep[v]]}
	}
	schedule.SortInstances(g.p, out)
	return out
}

// graph is compact's difference constraints (a system.System): a
// variable per instance (block i, micro-batch m is variable i·n + m),
// each standing for its pair's representative (rep; itself when
// unpaired), and constraints to ≥ from + lag, a start-to-start lag, via
// a device (or -1 for a dependency) for the error that names a cycle.
type graph struct {
	p   *placement.Placement
	n   int
	rep []int
	// pairTime is the pair's time of a paired node (nil: no pairs).
	pairTime map[int]int
	sys      system.System
	via      []int
}

// edge is the constraint to ≥ from + lag, via device d (-1: a dependency).
func (g *graph) edge(from, to, d, lag int) {
	g.sys.Add(to, from, lag)
	g.via = append(g.via, d)
}

func (g *graph) node(r schedule.Ref) int { return r.Block*g.n + r.Micro }
func (g *graph) ref(v int) schedule.Ref  { return schedule.Ref{Block: v / g.n, Micro: v % g.n} }
func (g *graph) name(r schedule.Ref) string {
	return g.p.Blocks[r.Block].ID + fmt.Sprintf("^%d", r.Micro)
}

// dur is how long node v occupies its devices.
func (g *graph) dur(v int) int {
	if t, ok := g.pairTime[v]; ok {
		return t
	}
	return g.p.Blocks[g.ref(v).Block].Time
}

// merge lets every rule of the list that merges instances into one
// variable (rule.Merger: overlapped pairs), in the list's order, do so
// before the orders' edges are read.
func (g *graph) merge(pairs []schedule.Pair) error {
	m := &rule.Merging{Spec: spec.New(g.p, g.n), Pairs: pairs, Join: g.join}
	for _, r := range rules.All() {
		if mg, ok := r.(rule.Merger); ok {
			if err := mg.Merge(m); err != nil {
				return fmt.Errorf("compact: %w", err)
			}
		}
	}
	return nil
}

// join makes r's node to's, occupying its devices for t (rule.Merging's
// Join); false where r is joined already.
func (g *graph) join(r, to schedule.Ref, t int) bool {
	v := g.node(r)
	if _, dup := g.pairTime[v]; dup {
		return false
	}
	if g.pairTime == nil {
		g.pairTime = map[int]int{}
	}
	g.pairTime[v] = t
	g.rep[v] = g.node(to)
	return true
}

// orderEdges adds the device-order edges, checking the orders as it
// reads them: every instance listed once on each of its devices.
func (g *graph) orderEdges(orders [][]schedule.Ref) error {
	p, n, k := g.p, g.n, len(g.p.Blocks)
	nodes := len(g.rep)
	count := make([]int, nodes)
	stamp := make([]int, nodes) // d+1 when seen on device d
	for d, order := range orders {
		prev := -1
		for pos, r := range order {
			if r.Block < 0 || r.Block >= k || r.Micro < 0 || r.Micro >= n {
				return fmt.Errorf("compact: device %d, position %d: instance block %d micro-batch %d out of range (%d blocks, %d micro-batches)",
					d, pos, r.Block, r.Micro, k, n)
			}
			if !p.OnDevice(r.Block, d) {
				return fmt.Errorf("compact: device %d, position %d: %s is listed but runs on %s", d, pos, g.name(r), deviceList(p.Blocks[r.Block].Devices))
			}
			v := g.node(r)
			if stamp[v] == d+1 {
				return fmt.Errorf("compact: device %d: %s listed twice", d, g.name(r))
			}
			stamp[v] = d + 1
			count[v]++
			if prev >= 0 && g.rep[prev] != g.rep[v] {
				g.edge(g.rep[prev], g.rep[v], d, g.dur(prev))
			}
			prev = v
		}
	}
	for v := range nodes {
		r := g.ref(v)
		if devs := p.Blocks[r.Block].Devices; count[v] != len(devs) {
			return fmt.Errorf("compact: %s missing from the order of device %d", g.name(r), missingDevice(orders, devs, r))
		}
	}
	return nil
}

// dependencyEdges adds an edge for every dependency of every
// micro-batch, with its transfer time (placement's Delay).
func (g *graph) dependencyEdges() {
	p := g.p
	for _, dep := range p.Deps {
		delay := p.Delay(dep)
		for m := range g.n {
			u, w := g.node(schedule.Ref{Block: dep.From, Micro: m}), g.node(schedule.Ref{Block: dep.To, Micro: m})
			if g.rep[u] == g.rep[w] && u != w {
				continue // one overlapped action
			}
			g.edge(g.rep[u], g.rep[w], -1, delay-p.Blocks[dep.From].Time+g.dur(u))
		}
	}
}

// missingDevice returns the first device of devs whose order lacks r.
func missingDevice(orders [][]schedule.Ref, devs []int, r schedule.Ref) int {
	for _, d := range devs {
		if !slices.Contains(orders[d], r) {
			return d
		}
	}
	return devs[0]
}

// cycleText describes one cycle of the edges the topological pass
// could not order, e.g. "G^0 -(device 0)-> G^1 -(device 1)-> G^0".
func (g *graph) cycleText() string {
	edges := g.sys.Cycle()
	name := func(v int) string { return g.name(g.ref(v)) }
	var b strings.Builder
	b.WriteString(name(g.sys.Cons[edges[0]].Y))
	for _, e := range edges {
		if g.via[e] < 0 {
			b.WriteString(" -(dependency)-> ")
		} else {
			fmt.Fprintf(&b, " -(device %d)-> ", g.via[e])
		}
		b.WriteString(name(g.sys.Cons[e].X))
	}
	return "cycle " + b.String()
}
