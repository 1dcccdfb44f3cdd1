// Package coarsen makes a large operator graph small enough for the
// solver, and the solver's answer on the small graph an answer on the
// large one: She et al., "Automatic Operator-level Parallelism Planning
// for Distributed Deep Learning – A Mixed-Integer Programming Approach",
// §IV, Algorithm 1.
//
// Coarsen merges blocks of a placement whose blocks may choose their
// devices (placement's Options) into coarse blocks, down to a target
// count: first along safe edges (a producer with a single consumer whose
// consumer has a single producer, once redundant edges are set aside:
// such a merge never lengthens the critical path), then pairs of blocks
// with no path between them (never a cycle), under thresholds on the
// merged time and memory. Expand turns a schedule of the coarse
// placement into one of the original blocks: every block on its coarse
// block's choice of devices, in an order the coarse schedule gives, and
// timed exactly with the real transfers (the expanded schedule is what
// tessel verifies and writes).
package coarsen

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Options configure Coarsen.
type Options struct {
	// Target is the block count to reach: merging stops at Target or
	// fewer. It must be ≥ 1.
	Target int
	// EdgeFactor and PairFactor set the thresholds: a merge along a safe
	// edge may make a block of up to EdgeFactor times the mean coarse
	// block (the total time, or memory, over Target), a merge of two
	// unconnected blocks of up to PairFactor times — stricter, since
	// such a merge may lengthen the critical path. 0 means the defaults,
	// 2 and 1.5. When no pair is left under the thresholds, they double.
	EdgeFactor, PairFactor float64
	// Unit, when > 1, is the time quantum of the coarse placement: its
	// times and transfers are the members' divided by Unit, rounded up;
	// 0 means DefaultUnit's, -1 none (the members' times as they are).
	// The coarse schedule only chooses devices and orders (Expand re-times
	// them exactly), and a coarser clock makes its search cheaper: the
	// constructions' cost grows with the span of periods they try.
	Unit int
}

// DefaultTarget is the coarse block count of search and optimal's
// --coarsen without a count: She et al. coarsen §V-B's 200 operators to
// 40, and the search over assignments solves 40 blocks in seconds.
const DefaultTarget = 40

// DefaultUnit is the time quantum of a coarse placement (Options.Unit)
// when none is given: a third of the mean coarse block's time (the total
// time over the target), rounded, at least 1. A coarse block then takes
// about 3 units. The coarse schedule is only a plan of devices and
// orders, re-timed exactly on expansion; on She et al.'s §V-B graph (2
// chips, coarsened to 40) a unit of 8 solves in about half the time of a
// unit of 6 and expands within 2 % of it.
func DefaultUnit(total float64, target int) int {
	return max(1, int(math.Round(total/float64(target)/3)))
}

// Coarse is a coarse placement and how it maps onto the original one.
type Coarse struct {
	// Placement is the coarse placement: one block per group of original
	// blocks, with the options its members share, the members' times
	// summed on each option (placement's Costs), their memories summed,
	// and a dependency wherever a member depends on a member of another
	// group, whose transfer on a pair of options is the longest of the
	// members' transfers there.
	Placement *placement.Placement
	// Members lists, for every coarse block, its original blocks in a
	// topological order of the original placement.
	Members [][]int
	// Of is the coarse block of every original block.
	Of []int
	// EdgeMerges and PairMerges count the merges of each kind.
	EdgeMerges, PairMerges int
	// Unit is the coarse placement's time quantum (Options.Unit; 1:
	// the members' times as they are).
	Unit int
}

// Coarsen merges the blocks of p (acyclic; its options and their costs as
// placement's Options, OptionTime and OptionTransfer give them) down to
// o.Target blocks or fewer, as the package doc says. Blocks merge only
// when they share an option. When p has Target blocks or fewer it comes
// back as it is, each block its own group. Deterministic.
func Coarsen(p *placement.Placement, o Options) (*Coarse, error) {
	if o.Target < 1 {
		return nil, fmt.Errorf("coarsen: target must be at least 1, got %d", o.Target)
	}
	if o.EdgeFactor == 0 {
		o.EdgeFactor = 2
	}
	if o.PairFactor == 0 {
		o.PairFactor = 1.5
	}
	topo, ok := p.Topo()
	if !ok {
		return nil, fmt.Errorf("coarsen: placement %q has a cycle", p.Name)
	}
	g := newGraph(p, topo)
	totalT, totalM := 0.0, 0.0
	for i := range p.Blocks {
		totalT += g.time[i]
		totalM += float64(max(p.Blocks[i].Memory, 0))
	}
	tq, mq := totalT/float64(o.Target), totalM/float64(o.Target)
	edgeT, edgeM := o.EdgeFactor*tq, o.EdgeFactor*mq
	pairT, pairM := o.PairFactor*tq, o.PairFactor*mq
	c := &Coarse{}
	for g.count() > o.Target {
		g.refresh()
		if a, b, ok := g.safeEdge(edgeT, edgeM); ok {
			g.merge(a, b)
			c.EdgeMerges++
			continue
		}
		if a, b, ok := g.pair(pairT, pairM); ok {
			g.merge(a, b)
			c.PairMerges++
			continue
		}
		if !g.anyShared() {
			break // no two groups share an option: nothing can merge
		}
		edgeT, edgeM, pairT, pairM = 2*edgeT, 2*edgeM, 2*pairT, 2*pairM
	}
	unit := o.Unit
	if unit == 0 {
		unit = DefaultUnit(totalT, o.Target)
	}
	c.Unit = max(unit, 1)
	if err := g.build(p, c, c.Unit); err != nil {
		return nil, err
	}
	return c, nil
}

// graph is the coarsening state: groups of original blocks, each alive
// group with its members, mean time, memory and shared options.
type graph struct {
	p     *placement.Placement
	pos   []int // position of every original block in the topological order
	alive []bool
	mem   [][]int   // members of every group (group ids are original ids of their first member)
	time  []float64 // mean time over the group's options
	memo  []int     // memory, negatives counted as 0
	opts  [][][]int // the options the group's members share
	of    []int     // group of every original block
	// Derived by refresh: the groups' edges (deduplicated), reachability
	// and longest paths.
	succ, pred [][]int
	reach      []bitset // groups reachable from each group, itself excluded
	head, tail []float64
}

type bitset []uint64

func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) or(o bitset) {
	for k := range b {
		b[k] |= o[k]
	}
}

func newGraph(p *placement.Placement, topo []int) *graph {
	k := len(p.Blocks)
	g := &graph{p: p, pos: make([]int, k), alive: make([]bool, k), mem: make([][]int, k), time: make([]float64, k), memo: make([]int, k), opts: make([][][]int, k), of: make([]int, k)}
	for x, i := range topo {
		g.pos[i] = x
	}
	for i := range p.Blocks {
		g.alive[i] = true
		g.mem[i] = []int{i}
		g.opts[i] = p.DeviceOptions(i)
		t := 0.0
		for o := range g.opts[i] {
			t += float64(p.OptionTime(i, o))
		}
		g.time[i] = t / float64(len(g.opts[i]))
		g.memo[i] = max(p.Blocks[i].Memory, 0)
		g.of[i] = i
	}
	return g
}

func (g *graph) count() int {
	n := 0
	for _, a := range g.alive {
		if a {
			n++
		}
	}
	return n
}

// refresh recomputes the groups' edges, reachability and longest paths
// (mean times, no transfers) from the original dependencies.
func (g *graph) refresh() {
	k := len(g.alive)
	g.succ, g.pred = make([][]int, k), make([][]int, k)
	for _, d := range g.p.Deps {
		a, b := g.of[d.From], g.of[d.To]
		if a != b && !slices.Contains(g.succ[a], b) {
			g.succ[a] = append(g.succ[a], b)
			g.pred[b] = append(g.pred[b], a)
		}
	}
	order := g.order()
	words := (k + 63) / 64
	g.reach = make([]bitset, k)
	g.head, g.tail = make([]float64, k), make([]float64, k)
	for x := len(order) - 1; x >= 0; x-- {
		a := order[x]
		g.reach[a] = make(bitset, words)
		for _, b := range g.succ[a] {
			g.reach[a].set(b)
			g.reach[a].or(g.reach[b])
			g.tail[a] = max(g.tail[a], g.time[b]+g.tail[b])
		}
	}
	for _, a := range order {
		for _, b := range g.succ[a] {
			g.head[b] = max(g.head[b], g.head[a]+g.time[a])
		}
	}
}

// order is the alive groups in a topological order of the group graph:
// Kahn's algorithm, the ready group whose first member comes first in the
// original topological order first.
func (g *graph) order() []int {
	k := len(g.alive)
	indeg := make([]int, k)
	for a := range k {
		for _, b := range g.succ[a] {
			indeg[b]++
		}
	}
	var ready, out []int
	for a := range k {
		if g.alive[a] && indeg[a] == 0 {
			ready = append(ready, a)
		}
	}
	for len(ready) > 0 {
		slices.SortFunc(ready, func(x, y int) int { return cmp.Compare(g.pos[g.mem[x][0]], g.pos[g.mem[y][0]]) })
		a := ready[0]
		ready = ready[1:]
		out = append(out, a)
		for _, b := range g.succ[a] {
			if indeg[b]--; indeg[b] == 0 {
				ready = append(ready, b)
			}
		}
	}
	return out
}

// redundant reports whether edge a -> b is implied by another path.
func (g *graph) redundant(a, b int) bool {
	for _, c := range g.succ[a] {
		if c != b && g.reach[c].has(b) {
			return true
		}
	}
	return false
}

// reducedOut is the number of non-redundant edges out of a.
func (g *graph) reducedOut(a int) int {
	n := 0
	for _, c := range g.succ[a] {
		if !g.redundant(a, c) {
			n++
		}
	}
	return n
}

// reducedIn is the number of non-redundant edges into b.
func (g *graph) reducedIn(b int) int {
	n := 0
	for _, c := range g.pred[b] {
		if !g.redundant(c, b) {
			n++
		}
	}
	return n
}

// safeEdge is GetCandidateEdge: among the non-redundant edges a -> b with
// a's only (non-redundant) consumer b and b's only producer a, whose
// merge stays within the thresholds and shares an option, the one of the
// least merged time (then the earliest in topological order).
func (g *graph) safeEdge(maxT, maxM float64) (a, b int, ok bool) {
	best := -1.0
	for x := range g.alive {
		if !g.alive[x] {
			continue
		}
		for _, y := range g.succ[x] {
			if g.redundant(x, y) || g.reducedOut(x) != 1 || g.reducedIn(y) != 1 {
				continue
			}
			t := g.time[x] + g.time[y]
			if t > maxT || float64(g.memo[x]+g.memo[y]) > maxM || len(shared(g.opts[x], g.opts[y])) == 0 {
				continue
			}
			if !ok || t < best || t == best && g.before(x, y, a, b) {
				a, b, best, ok = x, y, t, true
			}
		}
	}
	return a, b, ok
}

// pair is GetCandidateNonEdge: among the pairs of groups with no path
// between them, whose merge stays within the thresholds and shares an
// option, the one whose merged group lies on the shortest longest path
// (the latest head plus both times plus the longest tail: how long the
// merge makes the critical path through it), then the least merged time,
// then the earliest in topological order.
func (g *graph) pair(maxT, maxM float64) (a, b int, ok bool) {
	bestLen, bestT := 0.0, 0.0
	for x := range g.alive {
		if !g.alive[x] {
			continue
		}
		for y := x + 1; y < len(g.alive); y++ {
			if !g.alive[y] || g.reach[x].has(y) || g.reach[y].has(x) {
				continue
			}
			t := g.time[x] + g.time[y]
			if t > maxT || float64(g.memo[x]+g.memo[y]) > maxM || len(shared(g.opts[x], g.opts[y])) == 0 {
				continue
			}
			l := max(g.head[x], g.head[y]) + t + max(g.tail[x], g.tail[y])
			if !ok || l < bestLen || l == bestLen && (t < bestT || t == bestT && g.before(x, y, a, b)) {
				a, b, bestLen, bestT, ok = x, y, l, t, true
			}
		}
	}
	return a, b, ok
}

// before orders candidate pairs by their members' first topological
// positions.
func (g *graph) before(x, y, a, b int) bool {
	px, py := g.pos[g.mem[x][0]], g.pos[g.mem[y][0]]
	pa, pb := g.pos[g.mem[a][0]], g.pos[g.mem[b][0]]
	return cmp.Or(cmp.Compare(min(px, py), min(pa, pb)), cmp.Compare(max(px, py), max(pa, pb))) < 0
}

// anyShared reports whether two alive groups share an option.
func (g *graph) anyShared() bool {
	for x := range g.alive {
		for y := x + 1; y < len(g.alive); y++ {
			if g.alive[x] && g.alive[y] && len(shared(g.opts[x], g.opts[y])) > 0 {
				return true
			}
		}
	}
	return false
}

// merge joins group b into group a (MergeNodes).
func (g *graph) merge(a, b int) {
	if g.pos[g.mem[b][0]] < g.pos[g.mem[a][0]] {
		a, b = b, a
	}
	g.mem[a] = append(g.mem[a], g.mem[b]...)
	slices.SortFunc(g.mem[a], func(x, y int) int { return cmp.Compare(g.pos[x], g.pos[y]) })
	for _, i := range g.mem[b] {
		g.of[i] = a
	}
	g.opts[a] = shared(g.opts[a], g.opts[b])
	g.memo[a] += g.memo[b]
	g.time[a] = g.meanTime(a)
	g.alive[b], g.mem[b] = false, nil
}

// meanTime is a group's time averaged over its options: the sum of its
// members' times on each.
func (g *graph) meanTime(a int) float64 {
	s := 0.0
	for _, opt := range g.opts[a] {
		for _, i := range g.mem[a] {
			s += float64(g.p.OptionTime(i, optionIndex(g.p.DeviceOptions(i), opt)))
		}
	}
	return s / float64(len(g.opts[a]))
}

// shared is the groups of devices in both option lists, in a's order.
func shared(a, b [][]int) [][]int {
	var out [][]int
	for _, x := range a {
		if slices.ContainsFunc(b, func(y []int) bool { return slices.Equal(x, y) }) {
			out = append(out, x)
		}
	}
	return out
}

// optionIndex is the index of group opt among opts (-1 if absent).
func optionIndex(opts [][]int, opt []int) int {
	return slices.IndexFunc(opts, func(x []int) bool { return slices.Equal(x, opt) })
}

// build makes the coarse placement of the alive groups, in topological
// order.
func (g *graph) build(p *placement.Placement, c *Coarse, unit int) error {
	quant := func(t int) int {
		if t <= 0 {
			return t
		}
		return max(1, (t+unit-1)/unit)
	}
	g.refresh()
	order := g.order()
	id := make([]int, len(g.alive)) // coarse index of every group
	q := p.Bare(p.Name + " coarsened")
	costs := &placement.Costs{}
	c.Of = make([]int, len(p.Blocks))
	for n, a := range order {
		id[a] = n
		b := placement.Block{ID: "c" + strconv.Itoa(n), Kind: placement.Forward, Candidates: cloneGroups(g.opts[a])}
		if len(g.opts[a]) == 1 {
			b.Candidates, b.Devices = nil, slices.Clone(g.opts[a][0])
		}
		times := make([]int, len(g.opts[a]))
		for o, opt := range g.opts[a] {
			for _, i := range g.mem[a] {
				times[o] += p.OptionTime(i, optionIndex(p.DeviceOptions(i), opt))
			}
		}
		for _, i := range g.mem[a] {
			b.Time += p.Blocks[i].Time
			b.Memory += p.Blocks[i].Memory
			c.Of[i] = n
		}
		b.Time = quant(b.Time)
		for o := range times {
			times[o] = quant(times[o])
		}
		if b.Time > placement.MaxTime || slices.Max(times) > placement.MaxTime {
			return fmt.Errorf("coarsen: placement %q: a coarse block would take more than %d", p.Name, placement.MaxTime)
		}
		q.Blocks = append(q.Blocks, b)
		costs.Times = append(costs.Times, times)
		c.Members = append(c.Members, slices.Clone(g.mem[a]))
	}
	// Dependencies in the order of the original ones, each once; sizes
	// summed; transfers the longest of the members' on each pair.
	costs.Transfers = map[placement.Dep][][]int{}
	sizes := map[placement.Dep]float64{}
	for _, d := range p.Deps {
		cd := placement.Dep{From: c.Of[d.From], To: c.Of[d.To]}
		if cd.From == cd.To {
			continue
		}
		fo, to := g.opts[g.of[d.From]], g.opts[g.of[d.To]]
		m, ok := costs.Transfers[cd]
		if !ok {
			q.Deps = append(q.Deps, cd)
			m = make([][]int, len(fo))
			for a := range m {
				m[a] = make([]int, len(to))
			}
			costs.Transfers[cd] = m
		}
		sizes[cd] += p.Size(d)
		for a, fa := range fo {
			for b, tb := range to {
				x := p.OptionTransfer(d, optionIndex(p.DeviceOptions(d.From), fa), optionIndex(p.DeviceOptions(d.To), tb))
				m[a][b] = max(m[a][b], x)
			}
		}
	}
	for _, m := range costs.Transfers {
		for a := range m {
			for b := range m[a] {
				m[a][b] = quant(m[a][b])
			}
		}
	}
	for cd, z := range sizes {
		if z != 1 {
			if q.Sizes == nil {
				q.Sizes = map[placement.Dep]float64{}
			}
			q.Sizes[cd] = z
		}
	}
	q.Costs = costs
	if err := q.Validate(); err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	c.Placement = q
	return nil
}

func cloneGroups(g [][]int) [][]int {
	out := make([][]int, len(g))
	for n, x := range g {
		out[n] = slices.Clone(x)
	}
	return out
}

// OneDevice is the time s's micro-batches take on one device alone: the
// sum of every instance's time (the chosen placement's times).
func OneDevice(s *schedule.Schedule) int {
	t := 0
	for _, b := range s.Placement.Blocks {
		t += b.Time
	}
	return t * s.MicroBatches
}
