package partition

import (
	"context"
	"math"
)

// localSearch improves a split's single-sample latency by single moves:
// a colour class (or a node without one) to another subgraph slot — an
// accelerator's piece, or the CPUs — kept when the split still fits the
// memory cap, every piece is contiguous and the latency drops. It
// repeats passes over the moves, in node order, until a pass improves
// nothing or ctx ends, and returns the best split, its pieces and its
// schedule (the start's when nothing improves). It is MinSampleLatency's
// primal heuristic: deterministic, and far cheaper per step than a
// solver check.
func localSearch(ctx context.Context, g *Graph, s *Split, pieces []int, q int) (*Split, []int, *SampleSchedule) {
	n := len(g.Nodes)
	K := g.Accelerators
	groups := [][]int{}
	byClass := map[int]int{}
	for v, x := range g.Nodes {
		if x.Class >= 0 {
			if i, ok := byClass[x.Class]; ok {
				groups[i] = append(groups[i], v)
				continue
			}
			byClass[x.Class] = len(groups)
		}
		groups = append(groups, []int{v})
	}
	dev := append([]int(nil), s.Device...)
	piece := append([]int(nil), pieces...)
	for v := range n {
		if dev[v] >= K {
			dev[v], piece[v] = K, 0 // the CPUs are one pool
		}
	}
	bestSplit, bestPieces := s, pieces
	bestSched, err := PiecesSampleLatency(s, pieces)
	if err != nil {
		return s, pieces, &SampleSchedule{Latency: math.Inf(1)}
	}
	try := func() (*Split, *SampleSchedule, bool) {
		t, err := NewSplit(g, dev)
		if err != nil || !t.Fits() {
			return nil, nil, false
		}
		sc, err := PiecesSampleLatency(t, piece)
		if err != nil || sc.Latency >= bestSched.Latency*(1-1e-12) {
			return nil, nil, false
		}
		return t, sc, true
	}
	for improved := true; improved && ctx.Err() == nil; {
		improved = false
		for _, gr := range groups {
			if ctx.Err() != nil {
				break
			}
			d0, p0 := dev[gr[0]], piece[gr[0]]
			for slot := 0; slot <= K*q; slot++ {
				d, p := K, 0
				if slot > 0 {
					d, p = (slot-1)/q, (slot-1)%q
				} else if g.CPUs == 0 {
					continue
				}
				if d == d0 && p == p0 || (d < K && math.IsInf(groupAcc(g, gr), 1)) {
					continue
				}
				for _, v := range gr {
					dev[v], piece[v] = d, p
				}
				if t, sc, ok := try(); ok {
					bestSplit, bestSched, bestPieces = t, sc, append([]int(nil), piece...)
					d0, p0, improved = d, p, true
					continue
				}
				for _, v := range gr {
					dev[v], piece[v] = d0, p0
				}
			}
		}
	}
	return bestSplit, bestPieces, bestSched
}

func groupAcc(g *Graph, gr []int) float64 {
	t := 0.0
	for _, v := range gr {
		t += g.Nodes[v].Acc
	}
	return t
}

// chainSplit is MinSampleLatency's second primal heuristic: the split of a
// topological order of the contracted graph (colour classes and the
// strongly connected components they make, as GreedyFill) into at most k
// intervals, one per accelerator, of least Σ over the intervals of
// transfers in, compute and transfers out, each within the memory cap.
// An interval of a topological order is contiguous, and the sum bounds
// the split's latency from above (the intervals run one after the other
// at worst). A dynamic program over the intervals finds it; nil when the
// order cannot be cut so (a unit too large, or one no accelerator runs).
func chainSplit(ctx context.Context, g *Graph) *Split {
	u, err := contract(g)
	if err != nil || g.Accelerators == 0 {
		return nil
	}
	order := topo(u.n, u.succ)
	m := len(order)
	pos := make([]int, u.n)
	for i, x := range order {
		pos[x] = i
	}
	members := make([][]int, u.n)
	for v := range g.Nodes {
		members[u.of[v]] = append(members[u.of[v]], v)
	}
	succ := g.succ()
	pred := make([][]int, len(g.Nodes))
	for v, ws := range succ {
		for _, w := range ws {
			pred[w] = append(pred[w], v)
		}
	}
	// last[v]: the position of v's last successor in another unit (-1:
	// none); ending[b]: the nodes whose last such successor is at b.
	last := make([]int, len(g.Nodes))
	ending := make([][]int, m)
	for v, ws := range succ {
		last[v] = -1
		for _, w := range ws {
			if u.of[w] != u.of[v] {
				last[v] = max(last[v], pos[u.of[w]])
			}
		}
		if last[v] >= 0 {
			ending[last[v]] = append(ending[last[v]], v)
		}
	}
	K := g.Accelerators
	inf := math.Inf(1)
	// f[b+1][k]: the least cost of order[:b+1] in k intervals.
	f := make([][]float64, m+1)
	from := make([][]int, m+1)
	for i := range f {
		f[i] = make([]float64, K+1)
		from[i] = make([]int, K+1)
		for k := range f[i] {
			f[i][k] = inf
		}
	}
	f[0][0] = 0
	seen := make([]int, len(g.Nodes)) // the a+1 whose inputs counted v
	for a := range m {
		if ctx.Err() != nil {
			return nil
		}
		in, out, acc, mem := 0.0, 0.0, 0.0, 0.0
		for b := a; b < m; b++ {
			x := order[b]
			if u.noAcc[x] > 0 {
				break
			}
			acc += u.acc[x]
			mem += u.size[x]
			if g.Memory > 0 && mem > g.Memory*(1+1e-12) {
				break
			}
			for _, v := range members[x] {
				for _, p := range pred[v] {
					if pos[u.of[p]] < a && seen[p] != a+1 {
						seen[p] = a + 1
						in += g.Nodes[p].Comm
					}
				}
				if last[v] > b {
					out += g.Nodes[v].Comm
				}
			}
			for _, v := range ending[b] {
				if pos[u.of[v]] >= a && pos[u.of[v]] < b {
					out -= g.Nodes[v].Comm // its last successor joined
				}
			}
			cost := in + acc + out
			for k := 1; k <= K; k++ {
				if t := f[a][k-1] + cost; t < f[b+1][k] {
					f[b+1][k], from[b+1][k] = t, a
				}
			}
		}
	}
	best := 0
	for k := 1; k <= K; k++ {
		if f[m][k] < f[m][best] {
			best = k
		}
	}
	if best == 0 || math.IsInf(f[m][best], 1) {
		return nil
	}
	piece := make([]int, u.n)
	for b, k := m, best; b > 0; k-- {
		a := from[b][k]
		for i := a; i < b; i++ {
			piece[order[i]] = k - 1
		}
		b = a
	}
	s, err := unitSplit(g, u, piece)
	if err != nil || !s.Fits() {
		return nil
	}
	return s
}
