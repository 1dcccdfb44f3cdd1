package partition

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tessel-pp/tessel/z3"
)

// MinSampleLatencyOptions tune MinSampleLatency.
type MinSampleLatencyOptions struct {
	// Subgraphs is q, the contiguous subgraphs an accelerator may hold
	// (Tarnawski et al. §4.1, Fig. 4); 0 or 1 is the contiguous program of
	// Fig. 3.
	Subgraphs int
	// Start is a split to improve on (its latency is the first upper
	// bound); nil: none. It must be one the program allows (it fits, and
	// with Subgraphs ≤ 1 it is contiguous), else it is ignored.
	Start *Split
	Seed  int
	// Progress, when set, is told of each better split and each raised
	// lower bound.
	Progress func(best, lowerBound float64)
	// SolverOnly leaves out the path relaxation (pathBound), so that the
	// solver alone must prove the bound: for measuring it.
	SolverOnly bool
}

// MinSampleLatencyResult is the best split the program found and how far from
// optimal it may be.
type MinSampleLatencyResult struct {
	// Split is nil when the solver found none and no Start was given.
	Split    *Split
	Schedule *SampleSchedule
	// Pieces is the rank of every accelerator node's subgraph on its
	// accelerator (all 0 for a contiguous split).
	Pieces []int
	// LowerBound is proven: no split the program allows has a smaller
	// latency. Gap = (Latency − LowerBound) / Latency, 0 when proven
	// optimal.
	Latency, LowerBound, Gap float64
	Proven                   bool
	// ProvenBy says what proved the lower bound: "relaxation" (the
	// longest path or pathBound meets the best split) or "solver".
	ProvenBy string
	// Grid is the time step the program counts in; reported latencies
	// are exact (SplitSampleLatency of the split).
	Grid   float64
	Checks int
	// Improved is false when nothing better than Start was found.
	Improved bool
	// Heuristic names the primal heuristic the best split came from
	// ("chain": chainSplit, "local search": localSearch), "" when it is
	// Start or the solver's.
	Heuristic string
	Elapsed   time.Duration
}

// MinSampleLatency minimises the latency of one sample over the splits onto the
// graph's accelerators and CPUs that fit the memory cap and keep colour
// classes on one device: Tarnawski et al.'s integer program (§4, Fig. 3;
// with opt.Subgraphs > 1, Fig. 4 of §4.1), solved with Z3 by a binary
// search on the latency, each step one satisfiability check, as
// NonContiguous does for the max load. The conditional constraints (6) and
// (10), which the paper linearises with a large constant (Lemma 4.1), are
// implications here; contiguity is constraints (11)–(13) with Boolean z.
// CPU nodes never wait for a core (the paper's assumption that ℓ is at
// least the graph's width); with no CPU (ℓ = 0) no node goes there.
//
// The lower bound starts at the best of two relaxations — the longest path
// with each node at its cheaper time, and the least latency of one path
// alone (pathBound) — and rises with every refuted latency. Times are scaled to
// integers on a grid of 10⁻⁸ of a latency bound; the rounding is taken off
// the lower bound. It stops when ctx ends, returning the best split found
// and its proven gap.
func MinSampleLatency(ctx context.Context, g *Graph, opt MinSampleLatencyOptions) (*MinSampleLatencyResult, error) {
	t0 := time.Now()
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if g.Training() {
		return nil, fmt.Errorf("the latency of one sample is for inference graphs: %s has backward nodes", g.Name)
	}
	ip := newSampleIP(g, max(opt.Subgraphs, 1))
	res := &MinSampleLatencyResult{Grid: ip.grid}
	if s := opt.Start; s != nil && s.Fits() && s.Colocated {
		if sc, err := SplitSampleLatency(s); err == nil && sc.MaxPieces() <= ip.q {
			res.Split, res.Schedule = s, sc
			res.Pieces = cutPieces(g, s.Device, ip.pred)
		}
	}

	ip.x = z3.NewContext()
	defer ip.x.Close()
	sv, err := ip.x.NewSolver(z3.SolverOptions{Seed: opt.Seed})
	if err != nil {
		return nil, err
	}
	defer sv.Close()
	ip.sv = sv
	ip.encode()

	lb := ip.relaxation(opt.SolverOnly)
	// closed: the relaxation already meets the best split (its bound is
	// exact, no grid).
	closed := func() bool { return res.Schedule != nil && lb >= res.Schedule.Latency*(1-1e-12) }
	o := ip.objective(res, lb, closed)
	if opt.Progress != nil {
		o.progress = func() {
			if res.Schedule != nil {
				opt.Progress(res.Schedule.Latency, math.Max(0, float64(o.lo)*ip.grid-ip.slack))
			}
		}
	}
	ip.heuristics(ctx, res, o, opt.Start != nil, closed)
	// Then improve the split globally (asking for anything better than the
	// best, with half the time left each time) and raise the lower bound
	// by bisection: objectiveSearch.run.
	err = o.run(ctx)
	res.Checks = o.checks
	if errors.Is(err, errNoSolution) {
		return nil, fmt.Errorf("no split fits the memory cap")
	}
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(t0)
	best := res.Schedule
	if best == nil {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("no split found before the time limit: %w", err)
		}
		return nil, fmt.Errorf("no split found")
	}
	res.Latency = best.Latency
	res.Proven = o.lo >= o.hi || closed()
	if res.Proven {
		res.ProvenBy = "solver"
		if closed() {
			res.ProvenBy = "relaxation"
		}
	}
	res.LowerBound = math.Min(math.Max(0, float64(o.lo)*ip.grid-ip.slack), best.Latency)
	res.LowerBound = math.Max(res.LowerBound, math.Min(lb, best.Latency))
	if best.Latency > 0 {
		res.Gap = (best.Latency - res.LowerBound) / best.Latency
	}
	return res, nil
}

// sampleIP is MinSampleLatency's program: the graph's geometry, the grid
// its times count in, and its variables. The best split lives in the
// result (MinSampleLatencyResult.Schedule).
type sampleIP struct {
	g *Graph
	// q subgraphs per accelerator, n nodes, K accelerators, S = K·q
	// slots besides the CPUs' (slot 0).
	q, n, K, S int
	succ, pred [][]int
	order, pos []int
	// grid is the time step; slack bounds the rounding of any latency.
	grid, slack float64

	x  *z3.Context
	sv *z3.Solver
	// on[v][j]: node v in slot j (0: the CPUs; 1..S: accelerator (j−1)/q,
	// its ((j−1) mod q)-th subgraph). in and outc: v's output enters or
	// leaves slot j (nil for a node without successors).
	on, in, outc [][]z3.Bool
	// lat[v] is when v's output is in host memory.
	lat   []z3.Int
	sinks []int
}

// newSampleIP is the geometry and the grid of g's program with q
// subgraphs per accelerator; encode adds the variables.
func newSampleIP(g *Graph, q int) *sampleIP {
	n := len(g.Nodes)
	ip := &sampleIP{g: g, q: q, n: n, K: g.Accelerators, S: g.Accelerators * q, succ: g.succ()}
	ip.pred = make([][]int, n)
	for v, ws := range ip.succ {
		for _, w := range ws {
			ip.pred[w] = append(ip.pred[w], v)
		}
	}
	ip.order = topo(n, ip.succ)
	ip.pos = make([]int, n)
	for i, v := range ip.order {
		ip.pos[v] = i
	}
	// Grid: a latency bound (every node on its slower device, every
	// transfer paid by every subgraph) over 10⁸.
	ub := 0.0
	for _, v := range g.Nodes {
		a := v.Acc
		if math.IsInf(a, 1) {
			a = 0
		}
		ub += math.Max(a, v.CPU) + v.Comm*float64(ip.S+1)
	}
	ip.grid = math.Max(ub/1e8, 1e-12)
	// slack bounds the rounding of any latency: each node's time, and
	// each transfer into and out of each subgraph, rounded by half a step.
	ip.slack = float64(n+2*n*ip.S) * ip.grid / 2
	return ip
}

// scale is t in grid steps.
func (ip *sampleIP) scale(t float64) int { return int(math.Round(t / ip.grid)) }

// encode asserts the program (Tarnawski et al.'s Fig. 3, or Fig. 4 with
// q > 1) on ip.sv, in the order the solver has always been given it.
func (ip *sampleIP) encode() {
	ip.encodeSlots()
	ip.encodeClasses()
	ip.encodeMemory()
	ip.encodeContiguity()
	ip.encodeTimes()
	for v := range ip.n {
		if len(ip.succ[v]) == 0 {
			ip.sinks = append(ip.sinks, v)
		}
	}
}

// encodeSlots: every node in one slot (1), and the symmetries of alike
// accelerators broken.
func (ip *sampleIP) encodeSlots() {
	g, x, sv, q, S := ip.g, ip.x, ip.sv, ip.q, ip.S
	ip.on = make([][]z3.Bool, ip.n)
	ones := make([]int, S+1)
	for j := range ones {
		ones[j] = 1
	}
	for v := range ip.n {
		ip.on[v] = make([]z3.Bool, S+1)
		for j := range S + 1 {
			ip.on[v][j] = x.BoolVar(fmt.Sprintf("x_%d_%d", v, j))
			d := (j - 1) / q
			switch {
			case j == 0 && g.CPUs == 0:
				sv.Assert(x.Not(ip.on[v][j]))
			case j > 0 && math.IsInf(g.Nodes[v].Acc, 1):
				sv.Assert(x.Not(ip.on[v][j]))
			case j > 0 && d > ip.pos[v]:
				// Accelerators are alike: the node at position p of a
				// topological order uses one of the first p+1.
				sv.Assert(x.Not(ip.on[v][j]))
			}
		}
		sv.Assert(x.Or(ip.on[v]...), x.PbLe(ip.on[v], ones, 1)) // (1)
	}
	// More symmetry: the accelerators in use are the first ones, and an
	// accelerator's subgraphs in use are its first ones.
	for j := 2; j <= S; j++ {
		p := j - 1 // the previous subgraph of the accelerator
		if (j-1)%q == 0 {
			p = j - q // the previous accelerator's first
		}
		var now, before []z3.Bool
		for v := range ip.n {
			now = append(now, ip.on[v][j])
			before = append(before, ip.on[v][p])
		}
		sv.Assert(x.Implies(x.Or(now...), x.Or(before...)))
	}
}

// encodeClasses: colour classes on one device (§4.1: per accelerator,
// not per subgraph).
func (ip *sampleIP) encodeClasses() {
	x, sv, q, on := ip.x, ip.sv, ip.q, ip.on
	devOn := func(v, d int) z3.Bool { return x.Or(on[v][1+d*q : 1+(d+1)*q]...) }
	iff := func(a, b z3.Bool) z3.Bool { return x.And(x.Implies(a, b), x.Implies(b, a)) }
	classFirst := map[int]int{}
	for v, nd := range ip.g.Nodes {
		if nd.Class < 0 {
			continue
		}
		u, ok := classFirst[nd.Class]
		if !ok {
			classFirst[nd.Class] = v
			continue
		}
		sv.Assert(iff(on[u][0], on[v][0]))
		for d := range ip.K {
			if q == 1 {
				sv.Assert(iff(on[u][1+d], on[v][1+d]))
			} else {
				sv.Assert(iff(devOn(u, d), devOn(v, d)))
			}
		}
	}
}

// encodeMemory: memory (3*), scaled so that the cap is 10⁶ and sizes
// round up: a split the program accepts fits.
func (ip *sampleIP) encodeMemory() {
	g, q := ip.g, ip.q
	if g.Memory <= 0 {
		return
	}
	for d := range ip.K {
		var bs []z3.Bool
		var cs []int
		for v, nd := range g.Nodes {
			if nd.Size <= 0 {
				continue
			}
			c := int(math.Min(math.Ceil(nd.Size*1e6/g.Memory*(1-1e-12)), 1_000_001))
			for j := 1 + d*q; j < 1+(d+1)*q; j++ {
				bs = append(bs, ip.on[v][j])
				cs = append(cs, c)
			}
		}
		ip.sv.Assert(ip.x.PbLe(bs, cs, 1_000_000))
	}
}

// encodeContiguity: contiguity (11)–(13) and CommIn/CommOut (4), (5),
// per slot.
func (ip *sampleIP) encodeContiguity() {
	x, sv, n, S, on := ip.x, ip.sv, ip.n, ip.S, ip.on
	ip.in = make([][]z3.Bool, n)
	ip.outc = make([][]z3.Bool, n)
	for v := range n {
		if len(ip.succ[v]) == 0 {
			continue
		}
		ip.in[v] = make([]z3.Bool, S+1)
		ip.outc[v] = make([]z3.Bool, S+1)
		for j := 1; j <= S; j++ {
			ip.in[v][j] = x.BoolVar(fmt.Sprintf("in_%d_%d", v, j))
			ip.outc[v][j] = x.BoolVar(fmt.Sprintf("out_%d_%d", v, j))
		}
	}
	for j := 1; j <= S; j++ {
		z := make([]z3.Bool, n)
		for v := range n {
			z[v] = x.BoolVar(fmt.Sprintf("z_%d_%d", v, j))
			sv.Assert(x.Implies(on[v][j], z[v])) // (11)
		}
		for u, ws := range ip.succ {
			for _, v := range ws {
				sv.Assert(
					x.Implies(z[v], z[u]),                                      // (12)
					x.Implies(x.And(z[v], on[u][j]), on[v][j]),                 // (13)
					x.Implies(x.And(on[v][j], x.Not(on[u][j])), ip.in[u][j]),   // (4)
					x.Implies(x.And(on[u][j], x.Not(on[v][j])), ip.outc[u][j]), // (5)
				)
			}
		}
	}
}

// encodeTimes: every slot's start and finish (6), (7), (10), (14), and
// the CPUs' times (8), (9).
func (ip *sampleIP) encodeTimes() {
	g, x, sv, n, S, q, on := ip.g, ip.x, ip.sv, ip.n, ip.S, ip.q, ip.on
	zero := x.IntVal(0)
	ip.lat = make([]z3.Int, n)
	for v := range n {
		ip.lat[v] = x.IntVar(fmt.Sprintf("lat_%d", v))
		sv.Assert(x.Ge(ip.lat[v], zero))
	}
	start := make([]z3.Int, S+1)
	fin := make([]z3.Int, S+1)
	for j := 1; j <= S; j++ {
		start[j] = x.IntVar(fmt.Sprintf("start_%d", j))
		fin[j] = x.IntVar(fmt.Sprintf("finish_%d", j))
		sv.Assert(x.Ge(start[j], zero))
		terms := []z3.Int{start[j]}
		for v, nd := range g.Nodes {
			if a := nd.Acc; !math.IsInf(a, 1) {
				if w := ip.scale(a); w > 0 {
					terms = append(terms, x.Ite(on[v][j], x.IntVal(w), zero))
				}
			}
			if ip.in[v] == nil {
				continue
			}
			if w := ip.scale(nd.Comm); w > 0 {
				terms = append(terms, x.Ite(ip.in[v][j], x.IntVal(w), zero), x.Ite(ip.outc[v][j], x.IntVal(w), zero))
			}
			sv.Assert(x.Implies(ip.in[v][j], x.Ge(start[j], ip.lat[v]))) // (6)
		}
		sv.Assert(x.Eq(fin[j], x.Add(terms...))) // (7)
		for v := range n {
			sv.Assert(x.Implies(on[v][j], x.Ge(ip.lat[v], fin[j]))) // (10)
		}
		if (j-1)%q > 0 {
			sv.Assert(x.Ge(start[j], fin[j-1])) // (14)
		}
	}
	for v, nd := range g.Nodes {
		c := x.IntVal(ip.scale(nd.CPU))
		sv.Assert(x.Implies(on[v][0], x.Ge(ip.lat[v], c))) // (8)
		for _, u := range ip.pred[v] {
			sv.Assert(x.Ge(ip.lat[v], ip.lat[u]),
				x.Implies(on[v][0], x.Ge(ip.lat[v], x.Add(ip.lat[u], c)))) // (9)
		}
	}
}

// relaxation is the lower bound before the solver: the longest path, each
// node at its cheaper time, and (unless solverOnly) the least latency of
// the heaviest paths alone.
func (ip *sampleIP) relaxation(solverOnly bool) float64 {
	lb := criticalPath(ip.g, ip.order, ip.pred)
	for _, byMemory := range []bool{false, true} {
		if !solverOnly {
			lb = math.Max(lb, pathBound(ip.g, heaviestPath(ip.g, ip.order, ip.pred, byMemory), ip.S))
		}
	}
	return lb
}

// objective is the search on the latency in grid steps, from the lower
// bound lb; every model it finds becomes res's split where it is better.
func (ip *sampleIP) objective(res *MinSampleLatencyResult, lb float64, closed func() bool) *objectiveSearch {
	o := &objectiveSearch{
		sv:     ip.sv,
		lo:     max(int(math.Floor((lb-ip.slack)/ip.grid)), 0),
		hi:     math.MaxInt,
		closed: closed,
		bound: func(T int) {
			if T < math.MaxInt {
				bound := ip.x.IntVal(T)
				for _, v := range ip.sinks {
					ip.sv.Assert(ip.x.Le(ip.lat[v], bound))
				}
			}
		},
		keep: func(m *z3.Model) (int, error) {
			s, pieces, err := ip.split(m)
			if err != nil {
				return 0, err
			}
			sc, err := PiecesSampleLatency(s, pieces)
			if err != nil {
				return 0, fmt.Errorf("the program's split: %v (a bug)", err)
			}
			if !s.Fits() || !s.Colocated {
				return 0, fmt.Errorf("the program's split exceeds the memory cap or separates a colour class (a bug)")
			}
			if res.Schedule == nil || sc.Latency < res.Schedule.Latency {
				res.Split, res.Schedule, res.Pieces, res.Improved, res.Heuristic = s, sc, pieces, true, ""
			}
			return ip.scale(res.Schedule.Latency), nil
		},
	}
	if res.Schedule != nil {
		o.hi = ip.scale(res.Schedule.Latency) // a split of latency ≤ hi·grid is known
	}
	return o
}

// split reads a model's split: every node's device (K: the CPUs, never
// waited for) and its subgraph's rank on its accelerator.
func (ip *sampleIP) split(m *z3.Model) (*Split, []int, error) {
	dev := make([]int, ip.n)
	pieces := make([]int, ip.n)
	for v := range ip.n {
		for j := range ip.S + 1 {
			if b, _ := m.Bool(ip.on[v][j]); b {
				if j == 0 {
					dev[v] = ip.K
				} else {
					dev[v], pieces[v] = (j-1)/ip.q, (j-1)%ip.q
				}
			}
		}
	}
	s, err := NewSplit(ip.g, dev)
	return s, pieces, err
}

// heuristics runs the primal heuristics before the solver: the interval
// split of least transfer and compute time (chainSplit), then a local
// search around the best split (localSearch); the solver is slow to find
// small improvements, these are not. started says res began from a
// given split.
func (ip *sampleIP) heuristics(ctx context.Context, res *MinSampleLatencyResult, o *objectiveSearch, started bool, closed func() bool) {
	if !closed() {
		if s := chainSplit(ctx, ip.g); s != nil {
			if sc, err := SplitSampleLatency(s); err == nil && (res.Schedule == nil || sc.Latency < res.Schedule.Latency) {
				res.Split, res.Schedule, res.Pieces = s, sc, cutPieces(ip.g, s.Device, ip.pred)
				res.Improved, res.Heuristic = started, "chain"
				o.hi = min(o.hi, ip.scale(sc.Latency))
			}
		}
	}
	if res.Schedule == nil || closed() {
		return
	}
	lctx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(ctx, time.Duration(float64(time.Until(dl))*0.3))
		defer cancel()
	}
	if s, pieces, sc := localSearch(lctx, ip.g, res.Split, res.Pieces, ip.q); sc.Latency < res.Schedule.Latency {
		res.Split, res.Schedule, res.Pieces, res.Improved, res.Heuristic = s, sc, pieces, true, "local search"
		o.hi = min(o.hi, ip.scale(sc.Latency))
	}
}

// criticalPath is the longest path of the graph with every node at its
// cheaper time (accelerator or CPU) and no transfer: a lower bound of
// every split's latency.
func criticalPath(g *Graph, order []int, pred [][]int) float64 {
	fin := make([]float64, len(g.Nodes))
	out := 0.0
	for _, v := range order {
		t := 0.0
		for _, u := range pred[v] {
			t = math.Max(t, fin[u])
		}
		c := g.Nodes[v].Acc
		if g.CPUs > 0 || math.IsInf(c, 1) {
			c = math.Min(c, g.Nodes[v].CPU)
		}
		fin[v] = t + c
		out = math.Max(out, fin[v])
	}
	return out
}

// heaviestPath is a path of the graph of the largest Σ of the nodes'
// cheaper times or, byMemory, of their sizes.
func heaviestPath(g *Graph, order []int, pred [][]int, byMemory bool) []int {
	n := len(g.Nodes)
	w := make([]float64, n)
	from := make([]int, n)
	end := -1
	for _, v := range order {
		x := g.Nodes[v].Size
		if !byMemory {
			x = math.Min(g.Nodes[v].Acc, g.Nodes[v].CPU)
		}
		from[v] = -1
		for _, u := range pred[v] {
			if from[v] < 0 || w[u] > w[from[v]] {
				from[v] = u
			}
		}
		w[v] = x
		if from[v] >= 0 {
			w[v] += w[from[v]]
		}
		if end < 0 || w[v] > w[end] {
			end = v
		}
	}
	var path []int
	for v := end; v >= 0; v = from[v] {
		path = append(path, v)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// pathBound is a lower bound of every split's latency: the least latency
// of the path alone, where each accelerator subgraph meets the path in an
// interval (a contiguous set does), at most slots intervals, each within
// the memory cap, an interval paying the transfer in from the node before
// it and out of its last node, and a node off the accelerators its CPU
// time. The nodes off the path only add time and memory.
func pathBound(g *Graph, path []int, slots int) float64 {
	L := len(path)
	if L == 0 {
		return 0
	}
	inf := math.Inf(1)
	// f[i][k]: the least time at which path[:i] is done with k intervals.
	f := make([][]float64, L+1)
	for i := range f {
		f[i] = make([]float64, slots+1)
		for k := range f[i] {
			f[i][k] = inf
		}
	}
	f[0][0] = 0
	for i := 0; i < L; i++ {
		for k := 0; k <= slots; k++ {
			t := f[i][k]
			if math.IsInf(t, 1) {
				continue
			}
			v := path[i]
			if g.CPUs > 0 {
				f[i+1][k] = math.Min(f[i+1][k], t+g.Nodes[v].CPU)
			}
			if k == slots {
				continue
			}
			in := 0.0
			if i > 0 {
				in = g.Nodes[path[i-1]].Comm
			}
			acc, mem := 0.0, 0.0
			for b := i; b < L; b++ {
				x := g.Nodes[path[b]]
				acc += x.Acc
				mem += x.Size
				if math.IsInf(acc, 1) || (g.Memory > 0 && mem > g.Memory*(1+1e-12)) {
					break
				}
				out := 0.0
				if b < L-1 {
					out = x.Comm
				}
				f[b+1][k+1] = math.Min(f[b+1][k+1], t+in+acc+out)
			}
		}
	}
	best := inf
	for _, t := range f[L] {
		best = math.Min(best, t)
	}
	if math.IsInf(best, 1) {
		return 0
	}
	return best
}
