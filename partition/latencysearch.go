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
// schedule (the start's when nothing improves). It is MinLatency's
// primal heuristic: deterministic, and far cheaper per step than a
// solver check.
func localSearch(ctx context.Context, g *Graph, s *Split, pieces []int, q int) (*Split, []int, *LatencySchedule) {
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
	bestSched, err := PiecesLatency(s, pieces)
	if err != nil {
		return s, pieces, &LatencySchedule{Latency: math.Inf(1)}
	}
	try := func() (*Split, *LatencySchedule, bool) {
		t, err := NewSplit(g, dev)
		if err != nil || !t.Fits() {
			return nil, nil, false
		}
		sc, err := PiecesLatency(t, piece)
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
