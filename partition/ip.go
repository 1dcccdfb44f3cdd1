package partition

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/tessel-pp/tessel/z3"
)

// IPOptions tune the non-contiguous integer program.
type IPOptions struct {
	// Start is a split to improve on (the DP's, usually); nil starts from
	// the greedy fill.
	Start *Split
	Seed  int
	// Progress, when set, is told of each better split and each raised
	// lower bound.
	Progress func(best, lowerBound float64)
}

// IPResult is the best non-contiguous split found and how far from
// optimal it may be.
type IPResult struct {
	Split *Split
	// LowerBound is proven: no split has a smaller max load (up to the
	// time grid, see Grid). Gap = (MaxLoad − LowerBound) / MaxLoad; 0
	// means proven optimal.
	LowerBound, Gap float64
	Proven          bool
	// Grid is the time step the program counts in (loads are scaled to
	// integers for Z3); the reported loads are exact.
	Grid   float64
	Checks int
	// Improved is false when the solver found nothing better than Start.
	Improved bool
	Elapsed  time.Duration
}

// NonContiguous minimises the max load over all splits, contiguous or not,
// that keep colour classes together and fit the memory cap: the integer
// program of Tarnawski et al.'s Fig. 6 without constraint (16), solved with Z3 by
// a binary search on the max load between a lower bound and the best split
// found, each step one satisfiability check. Times are scaled to integers
// on a grid fine enough that the rounding of all nodes together stays
// below 10⁻⁴ of the total time. It stops when ctx ends, returning the best
// split found and its proven gap; only an error without any split is an
// error.
func NonContiguous(ctx context.Context, g *Graph, opt IPOptions) (*IPResult, error) {
	t0 := time.Now()
	if err := g.Validate(); err != nil {
		return nil, err
	}
	best := opt.Start
	if best == nil {
		var err error
		if best, err = Greedy(g); err != nil {
			return nil, err
		}
	}
	ip := newLoadIP(g)
	ip.x = z3.NewContext()
	defer ip.x.Close()
	sv, err := ip.x.NewSolver(z3.SolverOptions{Seed: opt.Seed})
	if err != nil {
		return nil, err
	}
	defer sv.Close()
	ip.sv = sv
	ip.encode()
	// Lower bound: the fractional relaxation, transfers left out (they
	// only add): work may be split freely, the CPUs taking the groups
	// whose CPU time costs least accelerator time first.
	lb := fractionalBound(ip.acc, ip.cpu, ip.noAcc, ip.K, ip.L)
	res := &IPResult{Split: best, Grid: ip.grid}
	o := &objectiveSearch{
		sv:    sv,
		lo:    max(ip.scale(lb)-len(g.Nodes), 0),
		hi:    ip.scale(best.MaxLoad), // a split of max load ≤ hi·grid is known
		bound: func(T int) { sv.Assert(ip.loadLe(T)...) },
		keep: func(m *z3.Model) (int, error) {
			s, err := NewSplit(g, ip.devices(m))
			if err != nil {
				return 0, err
			}
			if !s.Fits() {
				return 0, fmt.Errorf("the program's split exceeds the memory cap (a bug)")
			}
			if s.MaxLoad < res.Split.MaxLoad {
				res.Split, res.Improved = s, true
			}
			return ip.scale(s.MaxLoad), nil
		},
	}
	if opt.Progress != nil {
		o.progress = func() { opt.Progress(res.Split.MaxLoad, float64(o.lo)*ip.grid) }
	}
	err = o.run(ctx)
	res.Checks = o.checks
	if err != nil {
		return nil, err
	}
	lo, hi := o.lo, o.hi
	// The grid rounds each node by at most half a step.
	res.LowerBound = math.Max(0, float64(lo)*ip.grid-float64(len(g.Nodes))*ip.grid/2)
	res.LowerBound = math.Min(res.LowerBound, res.Split.MaxLoad)
	res.Proven = lo >= hi
	if res.Split.MaxLoad > 0 {
		res.Gap = (res.Split.MaxLoad - res.LowerBound) / res.Split.MaxLoad
	}
	res.Elapsed = time.Since(t0)
	return res, nil
}

// loadIP is NonContiguous's program: the nodes in groups (one per colour
// class, classless nodes alone), what each group costs, the transfers
// that cross groups, the grid, and the variables.
type loadIP struct {
	g *Graph
	// group[v] is node v's group; ng groups.
	group []int
	ng    int
	// Per group: accelerator time, CPU time, size, and whether some node
	// cannot run on an accelerator.
	acc, cpu, size []float64
	noAcc          []bool
	xs             []groupCrossing
	grid           float64
	// K accelerators and L CPU cores.
	K, L int

	x  *z3.Context
	sv *z3.Solver
	// on[gi][d]: group gi on device d (accelerators 0..K−1, then the
	// CPUs); cut[i][d]: groupCrossing i is cut at accelerator d.
	on, cut [][]z3.Bool
}

// groupCrossing is a node's output that reaches other groups: its transfer
// time and the groups involved, its own first.
type groupCrossing struct {
	c    float64
	sets []int
}

// newLoadIP is g's groups, their costs and the grid; encode adds the
// variables.
func newLoadIP(g *Graph) *loadIP {
	n := len(g.Nodes)
	ip := &loadIP{g: g, group: make([]int, n), K: g.Accelerators, L: g.CPUs}
	// Groups: one per colour class (both passes), classless nodes alone.
	byClass := map[int]int{}
	for v, x := range g.Nodes {
		if x.Class >= 0 {
			if c, ok := byClass[x.Class]; ok {
				ip.group[v] = c
				continue
			}
			byClass[x.Class] = ip.ng
		}
		ip.group[v] = ip.ng
		ip.ng++
	}
	ip.acc = make([]float64, ip.ng)
	ip.cpu = make([]float64, ip.ng)
	ip.size = make([]float64, ip.ng)
	ip.noAcc = make([]bool, ip.ng)
	total := 0.0
	for v, x := range g.Nodes {
		if math.IsInf(x.Acc, 1) {
			ip.noAcc[ip.group[v]] = true
		} else {
			ip.acc[ip.group[v]] += x.Acc
			total += x.Acc
		}
		ip.cpu[ip.group[v]] += x.CPU
		ip.size[ip.group[v]] += x.Size
	}
	for v, ws := range g.succ() {
		if g.Nodes[v].Comm == 0 || len(ws) == 0 {
			continue
		}
		set := []int{ip.group[v]}
		for _, w := range ws {
			if !containsInt(set, ip.group[w]) {
				set = append(set, ip.group[w])
			}
		}
		if len(set) > 1 {
			ip.xs = append(ip.xs, groupCrossing{g.Nodes[v].Comm, set})
			total += g.Nodes[v].Comm
		}
	}
	for _, c := range ip.cpu {
		total = math.Max(total, c)
	}
	// Grid: Σ of all coefficients stays within Z3's 32-bit bound.
	ip.grid = math.Max(total/1e9, 1e-9)
	return ip
}

// scale is t in grid steps.
func (ip *loadIP) scale(t float64) int { return int(math.Round(t / ip.grid)) }

// encode asserts the program's constraints besides the load (15, 17–19)
// on ip.sv, in the order the solver has always been given them.
func (ip *loadIP) encode() {
	x, sv, K, nd := ip.x, ip.sv, ip.K, ip.K+ip.L
	ip.on = make([][]z3.Bool, ip.ng)
	for gi := range ip.ng {
		ip.on[gi] = make([]z3.Bool, nd)
		ones := make([]int, nd)
		for d := range nd {
			ip.on[gi][d] = x.BoolVar(fmt.Sprintf("x_%d_%d", gi, d))
			ones[d] = 1
			// Accelerators are alike: group gi uses one of the first gi+1
			// (symmetry breaking), and never one it cannot run on.
			if d < K && (ip.noAcc[gi] || d > gi) {
				sv.Assert(x.Not(ip.on[gi][d]))
			}
		}
		sv.Assert(x.Or(ip.on[gi]...), x.PbLe(ip.on[gi], ones, 1)) // constraint (15)
	}
	// Memory (17), scaled so that the cap is 10⁶ and sizes round up: a
	// split the program accepts fits.
	if ip.g.Memory > 0 {
		for d := range K {
			var bs []z3.Bool
			var cs []int
			for gi := range ip.ng {
				if ip.size[gi] > 0 {
					bs = append(bs, ip.on[gi][d])
					cs = append(cs, int(math.Ceil(ip.size[gi]*1e6/ip.g.Memory)))
				}
			}
			sv.Assert(x.PbLe(bs, cs, 1_000_000))
		}
	}
	// CommIn/CommOut (18, 19): cut[v][d] holds when v's group and a
	// successor's group are not all on d or all off it.
	ip.cut = make([][]z3.Bool, len(ip.xs))
	for i, c := range ip.xs {
		ip.cut[i] = make([]z3.Bool, K)
		for d := range K {
			ip.cut[i][d] = x.BoolVar(fmt.Sprintf("cut_%d_%d", i, d))
			a := ip.on[c.sets[0]][d]
			for _, o := range c.sets[1:] {
				b := ip.on[o][d]
				sv.Assert(x.Implies(x.And(a, x.Not(b)), ip.cut[i][d]), x.Implies(x.And(b, x.Not(a)), ip.cut[i][d]))
			}
		}
	}
}

// loadLe is load(d) ≤ T for every device, asserted in one scope per T:
// (20) and (21).
func (ip *loadIP) loadLe(T int) []z3.Bool {
	var out []z3.Bool
	for d := range ip.K + ip.L {
		var bs []z3.Bool
		var cs []int
		for gi := range ip.ng {
			t := ip.acc[gi]
			if d >= ip.K {
				t = ip.cpu[gi]
			} else if ip.noAcc[gi] {
				continue
			}
			if w := ip.scale(t); w > 0 {
				bs = append(bs, ip.on[gi][d])
				cs = append(cs, w)
			}
		}
		if d < ip.K {
			for i, c := range ip.xs {
				if w := ip.scale(c.c); w > 0 {
					bs = append(bs, ip.cut[i][d])
					cs = append(cs, w)
				}
			}
		}
		out = append(out, ip.x.PbLe(bs, cs, T))
	}
	return out
}

// devices reads a model's device of every node.
func (ip *loadIP) devices(m *z3.Model) []int {
	dev := make([]int, len(ip.g.Nodes))
	for v := range dev {
		for d := range ip.K + ip.L {
			if b, _ := m.Bool(ip.on[ip.group[v]][d]); b {
				dev[v] = d
			}
		}
	}
	return dev
}

// fractionalBound is the least T such that the groups' work fits on K
// accelerators and L CPU cores within T each when a group may be split
// between them (and no group is cut below its own cheaper time): a lower
// bound on the max load of every split.
func fractionalBound(acc, cpu []float64, noAcc []bool, K, L int) float64 {
	type item struct{ acc, cpu float64 }
	var must float64 // CPU time of the groups no accelerator runs
	var items []item
	single, total := 0.0, 0.0
	for g := range acc {
		best := math.Inf(1)
		if !noAcc[g] && K > 0 {
			best = acc[g]
		}
		if L > 0 {
			best = math.Min(best, cpu[g])
		}
		single = math.Max(single, best)
		if noAcc[g] {
			must += cpu[g]
			total += cpu[g]
			continue
		}
		items = append(items, item{acc[g], cpu[g]})
		total += math.Max(acc[g], cpu[g])
	}
	// Cheapest CPU time per unit of accelerator time first.
	sort.SliceStable(items, func(i, j int) bool {
		return items[i].cpu*items[j].acc < items[j].cpu*items[i].acc
	})
	fits := func(T float64) bool {
		room := float64(L)*T - must
		if room < 0 {
			return false
		}
		work := 0.0
		for _, it := range items {
			work += it.acc
		}
		for _, it := range items {
			if L == 0 || room <= 0 {
				break
			}
			f := 1.0
			if it.cpu > 0 {
				f = math.Min(1, room/it.cpu)
			}
			room -= f * it.cpu
			work -= f * it.acc
		}
		return work <= float64(K)*T*(1+1e-12)
	}
	lo, hi := single, math.Max(single, total)
	if math.IsInf(lo, 1) {
		return 0
	}
	if fits(lo) {
		return lo
	}
	for range 100 {
		mid := (lo + hi) / 2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}
