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
	// Groups: one per colour class (both passes), classless nodes alone.
	n := len(g.Nodes)
	group := make([]int, n)
	byClass := map[int]int{}
	ng := 0
	for v, x := range g.Nodes {
		if x.Class >= 0 {
			if c, ok := byClass[x.Class]; ok {
				group[v] = c
				continue
			}
			byClass[x.Class] = ng
		}
		group[v] = ng
		ng++
	}
	acc := make([]float64, ng)
	cpu := make([]float64, ng)
	size := make([]float64, ng)
	noAcc := make([]bool, ng)
	total := 0.0
	for v, x := range g.Nodes {
		if math.IsInf(x.Acc, 1) {
			noAcc[group[v]] = true
		} else {
			acc[group[v]] += x.Acc
			total += x.Acc
		}
		cpu[group[v]] += x.CPU
		size[group[v]] += x.Size
	}
	type cross struct {
		c    float64
		sets []int
	}
	var xs []cross
	for v, ws := range g.succ() {
		if g.Nodes[v].Comm == 0 || len(ws) == 0 {
			continue
		}
		set := []int{group[v]}
		for _, w := range ws {
			if !containsInt(set, group[w]) {
				set = append(set, group[w])
			}
		}
		if len(set) > 1 {
			xs = append(xs, cross{g.Nodes[v].Comm, set})
			total += g.Nodes[v].Comm
		}
	}
	for _, c := range cpu {
		total = math.Max(total, c)
	}
	// Grid: Σ of all coefficients stays within Z3's 32-bit bound.
	grid := math.Max(total/1e9, 1e-9)
	scale := func(t float64) int { return int(math.Round(t / grid)) }
	K, L := g.Accelerators, g.CPUs
	nd := K + L

	x := z3.NewContext()
	defer x.Close()
	sv, err := x.NewSolver(z3.SolverOptions{Seed: opt.Seed})
	if err != nil {
		return nil, err
	}
	defer sv.Close()
	on := make([][]z3.Bool, ng)
	for gi := range ng {
		on[gi] = make([]z3.Bool, nd)
		ones := make([]int, nd)
		for d := range nd {
			on[gi][d] = x.BoolVar(fmt.Sprintf("x_%d_%d", gi, d))
			ones[d] = 1
			// Accelerators are alike: group gi uses one of the first gi+1
			// (symmetry breaking), and never one it cannot run on.
			if d < K && (noAcc[gi] || d > gi) {
				sv.Assert(x.Not(on[gi][d]))
			}
		}
		sv.Assert(x.Or(on[gi]...), x.PbLe(on[gi], ones, 1)) // constraint (15)
	}
	// Memory (17), scaled so that the cap is 10⁶ and sizes round up: a
	// split the program accepts fits.
	if g.Memory > 0 {
		for d := range K {
			var bs []z3.Bool
			var cs []int
			for gi := range ng {
				if size[gi] > 0 {
					bs = append(bs, on[gi][d])
					cs = append(cs, int(math.Ceil(size[gi]*1e6/g.Memory)))
				}
			}
			sv.Assert(x.PbLe(bs, cs, 1_000_000))
		}
	}
	// CommIn/CommOut (18, 19): cut[v][d] holds when v's group and a
	// successor's group are not all on d or all off it.
	cut := make([][]z3.Bool, len(xs))
	for i, c := range xs {
		cut[i] = make([]z3.Bool, K)
		for d := range K {
			cut[i][d] = x.BoolVar(fmt.Sprintf("cut_%d_%d", i, d))
			a := on[c.sets[0]][d]
			for _, o := range c.sets[1:] {
				b := on[o][d]
				sv.Assert(x.Implies(x.And(a, x.Not(b)), cut[i][d]), x.Implies(x.And(b, x.Not(a)), cut[i][d]))
			}
		}
	}
	// load(d) ≤ T, one scope per T: (20) and (21).
	loadLe := func(T int) []z3.Bool {
		var out []z3.Bool
		for d := range nd {
			var bs []z3.Bool
			var cs []int
			for gi := range ng {
				t := acc[gi]
				if d >= K {
					t = cpu[gi]
				} else if noAcc[gi] {
					continue
				}
				if w := scale(t); w > 0 {
					bs = append(bs, on[gi][d])
					cs = append(cs, w)
				}
			}
			if d < K {
				for i, c := range xs {
					if w := scale(c.c); w > 0 {
						bs = append(bs, cut[i][d])
						cs = append(cs, w)
					}
				}
			}
			out = append(out, x.PbLe(bs, cs, T))
		}
		return out
	}
	// Lower bound: the fractional relaxation, transfers left out (they
	// only add): work may be split freely, the CPUs taking the groups
	// whose CPU time costs least accelerator time first.
	lb := fractionalBound(acc, cpu, noAcc, K, L)
	res := &IPResult{Split: best, Grid: grid}
	o := &objectiveSearch{
		sv:    sv,
		lo:    max(scale(lb)-len(g.Nodes), 0),
		hi:    scale(best.MaxLoad), // a split of max load ≤ hi·grid is known
		bound: func(T int) { sv.Assert(loadLe(T)...) },
		keep: func(m *z3.Model) (int, error) {
			dev := make([]int, n)
			for v := range n {
				for d := range nd {
					if b, _ := m.Bool(on[group[v]][d]); b {
						dev[v] = d
					}
				}
			}
			s, err := NewSplit(g, dev)
			if err != nil {
				return 0, err
			}
			if !s.Fits() {
				return 0, fmt.Errorf("the program's split exceeds the memory cap (a bug)")
			}
			if s.MaxLoad < res.Split.MaxLoad {
				res.Split, res.Improved = s, true
			}
			return scale(s.MaxLoad), nil
		},
	}
	if opt.Progress != nil {
		o.progress = func() { opt.Progress(res.Split.MaxLoad, float64(o.lo)*grid) }
	}
	err = o.run(ctx)
	res.Checks = o.checks
	if err != nil {
		return nil, err
	}
	lo, hi := o.lo, o.hi
	// The grid rounds each node by at most half a step.
	res.LowerBound = math.Max(0, float64(lo)*grid-float64(len(g.Nodes))*grid/2)
	res.LowerBound = math.Min(res.LowerBound, res.Split.MaxLoad)
	res.Proven = lo >= hi
	if res.Split.MaxLoad > 0 {
		res.Gap = (res.Split.MaxLoad - res.LowerBound) / res.Split.MaxLoad
	}
	res.Elapsed = time.Since(t0)
	return res, nil
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
