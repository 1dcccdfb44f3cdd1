package partition

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/limits"
)

// MaxTableCells caps the cells of the DP's table (ideals × device counts
// × CPU counts; about 13 bytes each): within it the table takes at most
// about 440 MB.
const MaxTableCells = 1 << 25

// MaxIdeals caps the number of ideals the DP enumerates: the DP's time
// grows with the number of nested pairs, up to their square (§5.1.1), and
// a graph with much branching has exponentially many. Tarnawski et al.'s
// largest graph, Inception-v3's layer graph, has 36,596.
const MaxIdeals = 200000

// units is the graph after the paper's preprocessing (appendix B): the
// forward part with each colour class's forward nodes contracted, an
// artificial forward image for every orphaned backward group (mirroring
// the backward edges around it), and then its strongly connected
// components contracted (and, for the DP, its idle units merged:
// mergeIdle). A unit is one node of that DAG; every node of the
// graph, forward or backward, belongs to exactly one unit, so a set of
// units is a set of nodes with its colocations kept.
type units struct {
	g       *Graph
	n       int     // units
	of      []int   // unit of each node
	pred    [][]int // the unit DAG
	succ    [][]int
	acc     []float64 // Σ Acc of the unit's nodes (+Inf counted in noAcc)
	cpu     []float64
	size    []float64
	noAcc   []int // nodes that cannot run on an accelerator
	mirror  bool  // every backward edge between units mirrors a forward path
	bwdSucc [][]int
}

func contract(g *Graph) (*units, error) {
	n := len(g.Nodes)
	// Colour groups, one per (class, pass); classless nodes alone.
	type key struct {
		class int
		back  bool
	}
	group := make([]int, n)
	gid := map[key]int{}
	var groupBack []bool
	var groupClass []int
	for v, x := range g.Nodes {
		if x.Class < 0 {
			group[v] = len(groupBack)
			groupBack = append(groupBack, x.Backward)
			groupClass = append(groupClass, -1)
			continue
		}
		k := key{x.Class, x.Backward}
		id, ok := gid[k]
		if !ok {
			id = len(groupBack)
			gid[k] = id
			groupBack = append(groupBack, x.Backward)
			groupClass = append(groupClass, x.Class)
		}
		group[v] = id
	}
	// The forward image of every group: itself for a forward group, its
	// class's forward group for a backward one, or a new artificial node
	// for an orphan. Images are numbered 0..m-1.
	ng := len(groupBack)
	image := make([]int, ng)
	m := 0
	for x := range ng {
		if !groupBack[x] {
			image[x] = m
			m++
		}
	}
	orphan := make([]bool, ng)
	for x := range ng {
		if !groupBack[x] {
			continue
		}
		if f, ok := gid[key{groupClass[x], false}]; ok && groupClass[x] >= 0 {
			image[x] = image[f]
			continue
		}
		orphan[x] = true
		image[x] = m
		m++
	}
	fsucc := make([]map[int]bool, m)
	for i := range fsucc {
		fsucc[i] = map[int]bool{}
	}
	for _, e := range g.Edges {
		a, b := group[e[0]], group[e[1]]
		switch {
		case !groupBack[a] && !groupBack[b]:
			if image[a] != image[b] {
				fsucc[image[a]][image[b]] = true
			}
		case groupBack[a] && groupBack[b] && (orphan[a] || orphan[b]):
			// The mirror image of a backward edge next to an orphan.
			if image[a] != image[b] {
				fsucc[image[b]][image[a]] = true
			}
		}
	}
	adj := make([][]int, m)
	for i := range m {
		for j := range fsucc[i] {
			adj[i] = append(adj[i], j)
		}
		sort.Ints(adj[i])
	}
	comp, nc := scc(adj)
	// Components come numbered in a topological order, so that everything
	// downstream is deterministic.
	of := make([]int, n)
	for v := range n {
		of[v] = comp[image[group[v]]]
	}
	var edges [][2]int
	for i := range m {
		for _, j := range adj[i] {
			if comp[i] != comp[j] {
				edges = append(edges, [2]int{comp[i], comp[j]})
			}
		}
	}
	return newUnits(g, of, nc, edges), nil
}

// newUnits builds the units from the unit of every node, their number
// and the edges of the unit DAG (repeats allowed).
func newUnits(g *Graph, of []int, nc int, edges [][2]int) *units {
	u := &units{g: g, n: nc, of: of}
	succSet := make([]map[int]bool, nc)
	for i := range succSet {
		succSet[i] = map[int]bool{}
	}
	for _, e := range edges {
		succSet[e[0]][e[1]] = true
	}
	u.succ = make([][]int, nc)
	u.pred = make([][]int, nc)
	for i := range nc {
		for j := range succSet[i] {
			u.succ[i] = append(u.succ[i], j)
			u.pred[j] = append(u.pred[j], i)
		}
	}
	for i := range nc {
		sort.Ints(u.succ[i])
		sort.Ints(u.pred[i])
	}
	u.acc = make([]float64, nc)
	u.cpu = make([]float64, nc)
	u.size = make([]float64, nc)
	u.noAcc = make([]int, nc)
	for v, x := range g.Nodes {
		c := u.of[v]
		if math.IsInf(x.Acc, 1) {
			u.noAcc[c]++
		} else {
			u.acc[c] += x.Acc
		}
		u.cpu[c] += x.CPU
		u.size[c] += x.Size
	}
	// Backward contiguity (§5.3) comes free when every backward edge
	// between units mirrors a forward path: then a backward set taken with
	// a contiguous forward set is contiguous too (contiguity is kept by
	// reversing edges). Otherwise the DP checks each candidate.
	reach := u.reachability()
	u.mirror = true
	bs := make([]map[int]bool, nc)
	for i := range bs {
		bs[i] = map[int]bool{}
	}
	for _, e := range g.Edges {
		if !g.Nodes[e[0]].Backward || !g.Nodes[e[1]].Backward {
			continue
		}
		a, b := u.of[e[0]], u.of[e[1]]
		if a == b {
			continue
		}
		bs[a][b] = true
		if !reach[b][a] {
			u.mirror = false
		}
	}
	u.bwdSucc = make([][]int, nc)
	for i := range nc {
		for j := range bs[i] {
			u.bwdSucc[i] = append(u.bwdSucc[i], j)
		}
		sort.Ints(u.bwdSucc[i])
	}
	return u
}

// reachability returns reach[a][b]: b is reachable from a in the unit DAG.
func (u *units) reachability() [][]bool {
	order := topo(u.n, u.succ)
	r := make([][]bool, u.n)
	for i := len(order) - 1; i >= 0; i-- {
		a := order[i]
		r[a] = make([]bool, u.n)
		for _, b := range u.succ[a] {
			r[a][b] = true
			for c, ok := range r[b] {
				if ok {
					r[a][c] = true
				}
			}
		}
	}
	return r
}

// scc returns the strongly connected component of each node (Tarjan's
// algorithm, iterative) and their number.
func scc(adj [][]int) ([]int, int) {
	n := len(adj)
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	comp := make([]int, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	next, nc := 0, 0
	type frame struct{ v, i int }
	for r := range n {
		if index[r] >= 0 {
			continue
		}
		call := []frame{{r, 0}}
		index[r], low[r] = next, next
		next++
		stack = append(stack, r)
		on[r] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.i < len(adj[f.v]) {
				w := adj[f.v][f.i]
				f.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp[w] = nc
					if w == v {
						break
					}
				}
				nc++
			}
		}
	}
	// Tarjan numbers components in reverse topological order; flip them.
	for i := range comp {
		comp[i] = nc - 1 - comp[i]
	}
	return comp, nc
}

// lattice is the ideals (downward-closed sets, Definition 5.1) of the
// unit DAG as bitsets, ordered by size and then by bits, with the steps
// down the lattice: down[i] lists, for every maximal unit x of ideal i,
// x and the index of ideal i \ {x}.
type lattice struct {
	sets [][]uint64
	down [][]step
}

type step struct{ unit, to int32 }

// ideals enumerates the lattice, or fails beyond MaxIdeals.
func (u *units) ideals(ctx context.Context) (*lattice, error) {
	w := (u.n + 63) / 64
	empty := make([]uint64, w)
	seen := map[string]int{string(words(empty)): 0}
	all := [][]uint64{empty}
	down := [][]step{nil}
	for q := 0; q < len(all); q++ {
		if q%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cur := all[q]
		for x := range u.n {
			if has(cur, x) {
				continue
			}
			ok := true
			for _, p := range u.pred[x] {
				if !has(cur, p) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			nx := append([]uint64(nil), cur...)
			nx[x/64] |= 1 << (x % 64)
			k := string(words(nx))
			id, ok := seen[k]
			if !ok {
				id = len(all)
				seen[k] = id
				all = append(all, nx)
				down = append(down, nil)
				if len(all) > MaxIdeals {
					return nil, fmt.Errorf("more than %d ideals: the graph branches too much for the DP (try --non-contiguous)", MaxIdeals)
				}
			}
			down[id] = append(down[id], step{int32(x), int32(q)})
		}
	}
	perm := make([]int, len(all))
	for i := range perm {
		perm[i] = i
	}
	sizes := make([]int, len(all))
	for i, set := range all {
		sizes[i] = popcount(set)
	}
	sort.SliceStable(perm, func(i, j int) bool {
		a, b := perm[i], perm[j]
		if sizes[a] != sizes[b] {
			return sizes[a] < sizes[b]
		}
		for k := range all[a] {
			if all[a][k] != all[b][k] {
				return all[a][k] < all[b][k]
			}
		}
		return false
	})
	inv := make([]int32, len(all))
	for i, p := range perm {
		inv[p] = int32(i)
	}
	l := &lattice{sets: make([][]uint64, len(all)), down: make([][]step, len(all))}
	for i, p := range perm {
		l.sets[i] = all[p]
		d := down[p]
		for k := range d {
			d[k].to = inv[d[k].to]
		}
		sort.Slice(d, func(a, b int) bool { return d[a].unit < d[b].unit })
		l.down[i] = d
	}
	return l, nil
}

// under returns the index of ideal i \ {x}, x a maximal unit of ideal i.
func (l *lattice) under(i int, x int32) int {
	for _, s := range l.down[i] {
		if s.unit == x {
			return int(s.to)
		}
	}
	panic("partition: step down the lattice from a unit that is not maximal")
}

func has(set []uint64, x int) bool { return set[x/64]&(1<<(x%64)) != 0 }

func popcount(set []uint64) int {
	n := 0
	for _, x := range set {
		n += bits.OnesCount64(x)
	}
	return n
}

func words(set []uint64) []byte {
	b := make([]byte, 0, 8*len(set))
	for _, x := range set {
		for k := range 8 {
			b = append(b, byte(x>>(8*k)))
		}
	}
	return b
}

func subset(a, b []uint64) bool {
	for k := range a {
		if a[k]&^b[k] != 0 {
			return false
		}
	}
	return true
}

// DPOptions tune the dynamic program.
type DPOptions struct {
	// Stages, when > 0, replaces the devices: the DP cuts the model into
	// exactly this many accelerator stages (chunks of an interleaved
	// placement) of least maximum stage load, with no CPU, each under
	// MemoryPerStage (0: the graph's cap).
	Stages         int
	MemoryPerStage float64
	// StageDevices, with Stages, names the device of each stage (an
	// interleaved order). A device runs its stages one after the other, so
	// its load is their sum: the DP's cuts are then moved, one at a time,
	// while that lowers the largest sum (then the sum of squares), keeping
	// every device's memory within DeviceMemory (0: none). This local
	// search is a heuristic: the DP is exact for one stage per device.
	StageDevices []int
	DeviceMemory float64
	// EmptyStages, with Stages and StageDevices, lets a stage hold no
	// unit (Megatron-Core's layouts allow it): where the graph has fewer
	// units than Stages the DP cuts as many stages as there are units and
	// puts the others, empty, where they lower the largest device load
	// most; the cuts are then moved as above, a stage becoming empty where
	// that lowers it.
	EmptyStages bool
	// Workers is the number of goroutines that fill the DP's table
	// (0: GOMAXPROCS). The answer does not depend on it.
	Workers int
}

// DPResult is the DP's answer and what it cost.
type DPResult struct {
	Split *Split
	// Ideals is the number of ideals of the contracted forward part (the
	// paper's "Ideals" column); Units the number of its nodes.
	Ideals, Units int
	// Pairs is the number of pairs of nested ideals the DP evaluated;
	// Visited counts those it walked through, evaluated or not (see
	// Contiguous).
	Pairs, Visited int
	// Order lists the devices of Split.Stages in pipeline order (the
	// DP's stages, first to last).
	Order []int
}

// Contiguous finds the contiguous split of least maximum load (§5.1.1 and
// appendix B) onto the graph's accelerators and CPUs under its memory cap,
// by dynamic programming over the ideals of the contracted graph: the
// forward part only, each unit carrying its backward nodes (§5.3), after
// the preprocessing of Tarnawski et al.'s published implementation
// (contract, mergeIdle), so that its ideals are the ones their Table 1
// counts.
//
// For every ideal I it walks the ideals J under I from the top down
// (walker), so that a pair (I, J) costs a few operations, and it skips
// what cannot matter: a split whose stages are intervals of one
// topological order gives an upper bound B of the answer; a branch of the
// walk stops where the stage I \ J's compute time exceeds B, and the cells
// (I, k, ℓ) whose work cannot fit within B on their devices, or whose
// remaining work cannot on the devices left, are never computed. None of
// this changes the answer or the split (TestContiguousMatchesNaiveDP). Its
// time is at most O(P·(k+1)·(ℓ+1)) plus the transfer costs, P the number
// of nested pairs of ideals (up to I², I the number of ideals); it checks
// ctx between rows. It fails where no contiguous split fits the memory.
func Contiguous(ctx context.Context, g *Graph, opt DPOptions) (*DPResult, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	u, err := contract(g)
	if err != nil {
		return nil, err
	}
	if opt.Stages == 0 {
		u = u.mergeIdle()
	}
	lat, err := u.ideals(ctx)
	if err != nil {
		return nil, err
	}
	ideals := lat.sets
	K, L, M := g.Accelerators, g.CPUs, g.Memory
	givenK, givenL := K, L
	if opt.Stages > 0 {
		K, L = opt.Stages, 0
		givenK, givenL = K, L
		if opt.MemoryPerStage > 0 {
			M = opt.MemoryPerStage
		}
	} else {
		// Every stage holds a unit at least: devices beyond the units
		// stay empty, and the table need not count them (the answer is
		// the same; 2^62 devices no longer ask for a table of 2^62 rows).
		K, L = min(K, u.n), min(L, u.n)
	}
	empty := opt.Stages > 0 && opt.EmptyStages && len(opt.StageDevices) == opt.Stages
	if empty && u.n < K {
		K = u.n // the others stay empty
	}
	nI := len(ideals)
	cells := (K + 1) * (L + 1)
	if nI > MaxTableCells/cells {
		return nil, limits.Over(fmt.Sprintf("cells of the DP's table (%d ideals × %d device counts; fewer layers or devices)", nI, cells), float64(nI)*float64(cells), MaxTableCells)
	}
	t := newTables(g, u, ideals)
	inf := math.Inf(1)
	r := &dpRun{u: u, t: t, lat: lat, ideals: ideals, K: K, L: L, M: M, cells: cells, empty: empty, givenK: givenK,
		dp: make([]float64, nI*cells), from: make([]int32, nI*cells), onCPU: make([]bool, nI*cells)}
	for i := range r.dp {
		r.dp[i] = inf
		r.from[i] = -1
	}
	r.dp[0] = 0 // the empty ideal with no device
	dp := r.dp
	res := &DPResult{Ideals: nI, Units: u.n}
	full := nI - 1
	final := func(c int) bool { return opt.Stages == 0 || c == K*(L+1) } // chunks: exactly Stages stages
	// Any stage whose load must exceed a known split's max load cannot be
	// on an optimal chain: the stages I \ J of the ideals under I are
	// enumerated from the top down and a branch stops where its compute
	// time (a lower bound of every larger stage's load) exceeds it.
	ub, err := r.chainBound(ctx, final)
	if err != nil {
		return nil, err
	}
	r.cut = ub + 1e-9*math.Max(1, math.Abs(ub))
	r.useful = t.usefulCells(u, K, L, ub)
	if err := r.fill(ctx, opt.Workers, res); err != nil {
		return nil, err
	}
	best, bc := inf, -1
	for c := range cells {
		if !final(c) {
			continue
		}
		if dp[full*cells+c] < best {
			best, bc = dp[full*cells+c], c
		}
	}
	if bc < 0 {
		return nil, fmt.Errorf("no contiguous split fits: some stage exceeds the memory cap %v on every split onto %d accelerators and %d CPUs", M, givenK, givenL)
	}
	pieces, err := r.walkBack(ctx, full, bc, opt)
	if err != nil {
		return nil, err
	}
	return r.split(g, opt, pieces, res)
}

// fill computes every row of the table. Rows of ideals of one size depend
// only on smaller ideals: the workers share each size, and each row's
// value is the same whoever computes it.
func (r *dpRun) fill(ctx context.Context, workers int, res *DPResult) error {
	u, t, nI := r.u, r.t, len(r.ideals)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	walkers := make([]*walker, workers)
	stats := make([]dpStats, workers)
	for n := range walkers {
		walkers[n] = &walker{u: u, lat: r.lat, need: make([]int32, u.n), bufs: make([][]int32, u.n+2)}
	}
	for lo := 1; lo < nI; {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := lo + 1
		for hi < nI && t.size[hi] == t.size[lo] {
			hi++
		}
		if hi-lo < 2*workers {
			for i := lo; i < hi; i++ {
				r.row(walkers[0], i, &stats[0])
			}
		} else {
			var next atomic.Int64
			next.Store(int64(lo))
			var wg sync.WaitGroup
			var pan safego.Panic
			for n := range workers {
				pan.Go(&wg, func() {
					for {
						i := int(next.Add(1) - 1)
						if i >= hi || ctx.Err() != nil {
							return
						}
						r.row(walkers[n], i, &stats[n])
					}
				})
			}
			wg.Wait()
			pan.Repanic()
		}
		lo = hi
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, st := range stats {
		res.Pairs += st.pairs
		res.Visited += st.visited
	}
	return nil
}

// dpPiece is one stage of the split found: the ideals it lies between,
// and whether it is on a CPU.
type dpPiece struct {
	lo, hi int
	cpu    bool
}

// walkBack walks back from the full ideal in cell bc: the stages come
// out last first. With the chunks' stage devices it improves the cuts for
// the devices' sums.
func (r *dpRun) walkBack(ctx context.Context, full, bc int, opt DPOptions) ([]dpPiece, error) {
	var pieces []dpPiece
	for i, c := full, bc; i != 0; {
		j := int(r.from[i*r.cells+c])
		cpu := r.onCPU[i*r.cells+c]
		pieces = append(pieces, dpPiece{j, i, cpu})
		if cpu {
			c--
		} else {
			c -= r.L + 1
		}
		i = j
	}
	if opt.Stages > 0 && len(opt.StageDevices) == opt.Stages {
		// Pieces run first to last; improve the cuts for the devices' sums.
		chain := []int{0}
		for p := len(pieces) - 1; p >= 0; p-- {
			chain = append(chain, pieces[p].hi)
		}
		for len(chain) < opt.Stages+1 {
			if chain = r.t.insertEmpty(chain, opt.StageDevices, opt.DeviceMemory); chain == nil {
				return nil, fmt.Errorf("%d units cannot make %d stages, even with empty stages: the first and the last stage hold some", r.u.n, opt.Stages)
			}
		}
		if err := r.t.balance(ctx, chain, opt.StageDevices, opt.DeviceMemory, r.empty); err != nil {
			return nil, err
		}
		pieces = pieces[:0]
		for k := len(chain) - 2; k >= 0; k-- {
			pieces = append(pieces, dpPiece{chain[k], chain[k+1], false})
		}
		r.K = opt.Stages
	}
	return pieces, nil
}

// split is the split of the pieces (last first), its stages in the DP's
// order.
func (r *dpRun) split(g *Graph, opt DPOptions, pieces []dpPiece, res *DPResult) (*DPResult, error) {
	u, ideals, K := r.u, r.ideals, r.K
	dev := make([]int, len(g.Nodes))
	unitDev := make([]int, u.n)
	na, ncpu := 0, 0
	for p := len(pieces) - 1; p >= 0; p-- {
		d := 0
		if pieces[p].cpu {
			d = r.givenK + ncpu // CPUs come after every accelerator, used or not
			ncpu++
		} else {
			d = na
			na++
		}
		res.Order = append(res.Order, d)
		for x := range u.n {
			if has(ideals[pieces[p].hi], x) && !has(ideals[pieces[p].lo], x) {
				unitDev[x] = d
			}
		}
	}
	for v := range dev {
		dev[v] = unitDev[u.of[v]]
	}
	gg := g
	if opt.Stages > 0 {
		// The split's devices are the stages; the graph's memory stays
		// a device's (a device holds several stages, and its capacity
		// is what the memory model budgets; MemoryPerStage only bounds
		// the DP's stages).
		c := *g
		c.Accelerators, c.CPUs = K, 0
		gg = &c
	}
	var keep map[int]bool // the devices of empty stages
	if r.empty {
		keep = map[int]bool{}
		for _, d := range res.Order {
			keep[d] = true
		}
	}
	s, err := newSplit(gg, dev, keep)
	if err != nil {
		return nil, err
	}
	// Keep the DP's stage order (ties in NewSplit's order are possible
	// for stages without forward nodes).
	byDev := map[int]Stage{}
	for _, st := range s.Stages {
		byDev[st.Device] = st
	}
	s.Stages = s.Stages[:0]
	for _, d := range res.Order {
		s.Stages = append(s.Stages, byDev[d])
	}
	res.Split = s
	return res, nil
}

func containsInt(a []int, x int) bool {
	for _, y := range a {
		if y == x {
			return true
		}
	}
	return false
}

// backwardContiguous reports whether the backward nodes of the units in
// I \ J are contiguous among the backward edges between units: no path
// leaves the set and comes back.
func (u *units) backwardContiguous(I, J []uint64) bool {
	in := func(x int) bool { return has(I, x) && !has(J, x) }
	// Units reachable from the set, outside it.
	seen := make([]bool, u.n)
	var stack []int
	for x := range u.n {
		if in(x) {
			for _, y := range u.bwdSucc[x] {
				if !in(y) && !seen[y] {
					seen[y] = true
					stack = append(stack, y)
				}
			}
		}
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range u.bwdSucc[x] {
			if in(y) {
				return false
			}
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return true
}

// tables hold what the DP needs to price a stage I \ J in O(frontier):
// prefix sums over the ideals and the frontiers of the transfers.
type tables struct {
	ideals     [][]uint64
	pa, pc, ps []float64 // Σ accelerator time, CPU time and memory of each ideal
	pn         []int     // nodes that cannot run on an accelerator
	size       []int     // units in each ideal
	xs         []crossing
	front      [][]int32
}

// crossing is a node whose transfer c may be paid: the units of the node
// and of its successors (at least two).
type crossing struct {
	c   float64
	set []int
}

func newTables(g *Graph, u *units, ideals [][]uint64) *tables {
	nI := len(ideals)
	t := &tables{ideals: ideals, pa: make([]float64, nI), pc: make([]float64, nI), ps: make([]float64, nI), pn: make([]int, nI), size: make([]int, nI)}
	// Prefix sums make processing time and memory of I \ J a difference.
	for i, set := range ideals {
		t.size[i] = popcount(set)
		for x := range u.n {
			if has(set, x) {
				t.pa[i] += u.acc[x]
				t.pc[i] += u.cpu[x]
				t.ps[i] += u.size[x]
				t.pn[i] += u.noAcc[x]
			}
		}
	}
	// Transfers: c_v is paid by a set of units S exactly when the units of
	// v and its successors are partly in S (v or a successor in S, not
	// all). For S = I \ J those nodes are found on the frontiers of I and
	// J (the nodes whose units are partly inside), which stay small.
	for v, ws := range g.succ() {
		c := g.Nodes[v].Comm
		if c == 0 || len(ws) == 0 {
			continue
		}
		set := []int{u.of[v]}
		for _, w := range ws {
			if !containsInt(set, u.of[w]) {
				set = append(set, u.of[w])
			}
		}
		if len(set) > 1 {
			sort.Ints(set)
			t.xs = append(t.xs, crossing{c, set})
		}
	}
	t.front = make([][]int32, nI)
	for i, set := range ideals {
		for n, x := range t.xs {
			in := 0
			for _, a := range x.set {
				if has(set, a) {
					in++
				}
			}
			if in > 0 && in < len(x.set) {
				t.front[i] = append(t.front[i], int32(n))
			}
		}
	}
	return t
}

// acc is the load of stage I \ J (ideal indices i ⊇ j) on an accelerator,
// transfers included, or +Inf where it exceeds the memory cap M (0: none)
// or holds a node no accelerator runs.
func (t *tables) acc(i, j int, M float64) float64 {
	if t.pn[i] != t.pn[j] || M > 0 && t.ps[i]-t.ps[j] > M*(1+1e-12) {
		return math.Inf(1)
	}
	I, J := t.ideals[i], t.ideals[j]
	comm := 0.0
	for _, n := range t.front[j] {
		for _, a := range t.xs[n].set {
			if has(I, a) && !has(J, a) {
				comm += t.xs[n].c
				break
			}
		}
	}
	for _, n := range t.front[i] {
		in := false
		for _, a := range t.xs[n].set {
			if has(J, a) {
				in = true
				break
			}
		}
		if !in {
			comm += t.xs[n].c
		}
	}
	return t.pa[i] - t.pa[j] + comm
}

// balance moves the cuts of a chain of ideals (chain[0] empty, the last
// the whole graph; stage j is chain[j+1] \ chain[j] on device dev[j]) while
// that lowers the largest device load, then the sum of squared loads; a
// stage may become empty where allowEmpty.
func (t *tables) balance(ctx context.Context, chain, dev []int, mem float64, allowEmpty bool) error {
	nd := 0
	for _, d := range dev {
		nd = max(nd, d+1)
	}
	score := func() (float64, float64) { return t.score(chain, dev, nd, mem) }
	bw, bs := score()
	// above says whether ideal k may follow ideal lo in the chain: it is
	// larger, or (an empty stage, j of the stage between) equal where
	// stages may be empty, the first and the last stage excepted.
	above := func(k, lo, j int) bool {
		return t.size[k] > t.size[lo] || allowEmpty && t.size[k] == t.size[lo] && j > 0 && j < len(chain)-2
	}
	for round := 0; round < 100; round++ {
		improved := false
		for j := 1; j < len(chain)-1; j++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			lower, hi := chain[j-1], chain[j+1]
			keep := chain[j]
			for k := range t.ideals {
				if k == keep || !above(k, lower, j-1) || !above(hi, k, j) ||
					!subset(t.ideals[lower], t.ideals[k]) || !subset(t.ideals[k], t.ideals[hi]) {
					continue
				}
				chain[j] = k
				w, q := score()
				if w < bw-1e-12 || w <= bw+1e-12 && q < bs-1e-9 {
					bw, bs, keep, improved = w, q, k, true
				}
			}
			chain[j] = keep
		}
		if !improved {
			break
		}
	}
	return nil
}

// insertEmpty is chain with one more, empty, stage: a cut doubled where
// the devices' loads (score) are least, the first such place on a tie
// (the chain's first and last stages stay where they are).
func (t *tables) insertEmpty(chain, dev []int, mem float64) []int {
	nd := 0
	for _, d := range dev {
		nd = max(nd, d+1)
	}
	var best []int
	bw, bs := math.Inf(1), math.Inf(1)
	for j := 2; j < len(chain); j++ { // stage j−1 empty, neither the first nor the last
		c := append(append(append([]int(nil), chain[:j]...), chain[j-1]), chain[j:]...)
		// Scored as the whole pipeline, the stages still to insert empty
		// at its end.
		full := append([]int(nil), c...)
		for len(full) < len(dev)+1 {
			full = append(full, c[len(c)-1])
		}
		if w, q := t.score(full, dev, nd, mem); best == nil || w < bw-1e-12 || w <= bw+1e-12 && q < bs-1e-9 {
			best, bw, bs = c, w, q
		}
	}
	return best
}

// score is the largest device load of a chain of ideals and the sum of
// the squared loads (+Inf where a device's memory exceeds mem > 0).
func (t *tables) score(chain, dev []int, nd int, mem float64) (float64, float64) {
	load := make([]float64, nd)
	used := make([]float64, nd)
	for j := range dev {
		load[dev[j]] += t.acc(chain[j+1], chain[j], 0)
		used[dev[j]] += t.ps[chain[j+1]] - t.ps[chain[j]]
	}
	worst, sq := 0.0, 0.0
	for d := range nd {
		if mem > 0 && used[d] > mem*(1+1e-12) {
			return math.Inf(1), math.Inf(1)
		}
		worst = math.Max(worst, load[d])
		sq += load[d] * load[d]
	}
	return worst, sq
}

// dpRun is the DP's table and what its rows read.
type dpRun struct {
	u      *units
	t      *tables
	lat    *lattice
	ideals [][]uint64
	K, L   int
	M      float64
	cells  int
	// empty says the chunks' stages may be empty (DPOptions.EmptyStages).
	empty bool
	// givenK is the accelerators given: CPUs are numbered after every
	// one, used or not.
	givenK int
	cut    float64
	useful []bool
	dp     []float64
	from   []int32
	onCPU  []bool
}

type dpStats struct{ pairs, visited int }

// row fills the cells of ideal i from the rows of the ideals under it.
func (r *dpRun) row(w *walker, i int, st *dpStats) {
	u, t, K, L, M, cells := r.u, r.t, r.K, r.L, r.M, r.cells
	inf := math.Inf(1)
	I := r.ideals[i]
	row := r.dp[i*cells : (i+1)*cells]
	rowFrom := r.from[i*cells : (i+1)*cells]
	rowCPU := r.onCPU[i*cells : (i+1)*cells]
	mine := r.useful[i*cells : (i+1)*cells]
	some := false
	for _, ok := range mine {
		some = some || ok
	}
	if !some {
		return
	}
	w.visit = func(j int) bool {
		accLB, cpuLB := t.pa[i]-t.pa[j], t.pc[i]-t.pc[j]
		if K == 0 || t.pn[i] != t.pn[j] || M > 0 && t.ps[i]-t.ps[j] > M*(1+1e-12) {
			accLB = inf
		}
		if L == 0 {
			cpuLB = inf
		}
		if accLB > r.cut && cpuLB > r.cut {
			return false // this stage and every larger one
		}
		st.visited++
		prevOK := r.useful[j*cells : (j+1)*cells]
		some := false
		for k := 0; k <= K && !some; k++ {
			for l := 0; l <= L; l++ {
				c := k*(L+1) + l
				if mine[c] && (k > 0 && prevOK[c-(L+1)] || l > 0 && prevOK[c-1]) {
					some = true
					break
				}
			}
		}
		if !some {
			return true
		}
		st.pairs++
		accLoad := t.acc(i, j, M)
		cpuLoad := t.pc[i] - t.pc[j]
		prev := r.dp[j*cells : (j+1)*cells]
		j32 := int32(j)
		// The backward nodes of I \ J must be contiguous too (§5.3),
		// which holds by construction when the backward edges mirror the
		// forward ones; otherwise it is checked, once, when the pair would
		// improve a cell.
		checked, contiguous := u.mirror, true
		// Ties go to the smaller J, then to the accelerator.
		better := func(c int, v float64, cpu bool) bool {
			if !(v < row[c] || v == row[c] && v < inf && (j32 < rowFrom[c] || j32 == rowFrom[c] && !cpu && rowCPU[c])) {
				return false
			}
			if !checked {
				contiguous, checked = u.backwardContiguous(I, r.ideals[j]), true
			}
			return contiguous
		}
		for k := 0; k <= K; k++ {
			for l := 0; l <= L; l++ {
				c := k*(L+1) + l
				if !mine[c] {
					continue
				}
				if k > 0 && accLoad < inf {
					if v := math.Max(prev[c-(L+1)], accLoad); better(c, v, false) {
						row[c], rowFrom[c], rowCPU[c] = v, j32, false
					}
				}
				if l > 0 {
					if v := math.Max(prev[c-1], cpuLoad); better(c, v, true) {
						row[c], rowFrom[c], rowCPU[c] = v, j32, true
					}
				}
			}
		}
		return true
	}
	w.walk(i)
}
