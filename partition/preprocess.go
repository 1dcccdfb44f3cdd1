package partition

// idle is how small a time counts as none when idle units are merged,
// as in Tarnawski et al.'s published implementation of the DP.
const idle = 1e-6

// mergeIdle is the last preprocessing step of Tarnawski et al.'s
// published DP ("Efficient Algorithms for Device Placement of DNN Graph
// Operators", the code beside its appendix B): a unit whose forward part
// takes no time on either device, whose backward part (if any) takes none
// either, that touches no backward node and has exactly one neighbour in
// the unit DAG is merged into that neighbour, again until none is left.
//
// Such units are the inputs, masks, reshapes and concatenations of the
// published graphs. Left alone, each one a source or sink with a single
// neighbour doubles the number of ideals (the paper's BERT-24 layer graph
// has 39 ideals without this step and the 30 its Table 1 prints with it).
// Putting such a unit beside its neighbour never raises a load: it adds
// no time, and the one transfer it could cause disappears. It adds the
// unit's memory to the neighbour's device, so under a tight memory cap a
// split that kept it apart could be lost; the published graphs' memory
// caps are far from binding.
func (u *units) mergeIdle() *units {
	g := u.g
	n := u.n
	fwd := make([]float64, n) // the largest of Σ Acc and Σ CPU of the forward nodes
	fa := make([]float64, n)
	fc := make([]float64, n)
	bwd := make([]float64, n) // Σ (Acc + CPU) of the backward nodes
	touch := make([]bool, n)  // a forward node of the unit has an edge to or from a backward node
	for v, x := range g.Nodes {
		c := u.of[v]
		if x.Backward {
			bwd[c] += x.Acc + x.CPU
		} else {
			fa[c] += x.Acc
			fc[c] += x.CPU
		}
	}
	for c := range n {
		fwd[c] = max(fa[c], fc[c])
	}
	for _, e := range g.Edges {
		a, b := g.Nodes[e[0]].Backward, g.Nodes[e[1]].Backward
		if a == b {
			continue
		}
		if !a {
			touch[u.of[e[0]]] = true
		}
		if !b {
			touch[u.of[e[1]]] = true
		}
	}
	root := make([]int, n)
	for c := range root {
		root[c] = c
	}
	var find func(int) int
	find = func(c int) int {
		if root[c] != c {
			root[c] = find(root[c])
		}
		return root[c]
	}
	merged := false
	for {
		// The neighbours of every merged unit, in the unit DAG.
		nb := make([]map[int]bool, n)
		for a := range n {
			for _, b := range u.succ[a] {
				ra, rb := find(a), find(b)
				if ra == rb {
					continue
				}
				if nb[ra] == nil {
					nb[ra] = map[int]bool{}
				}
				if nb[rb] == nil {
					nb[rb] = map[int]bool{}
				}
				nb[ra][rb], nb[rb][ra] = true, true
			}
		}
		x, to := -1, -1
		for c := range n {
			if find(c) != c || fwd[c] >= idle || bwd[c] >= idle || touch[c] || len(nb[c]) != 1 {
				continue
			}
			x = c
			for m := range nb[c] {
				to = m
			}
			break
		}
		if x < 0 {
			break
		}
		merged = true
		root[x] = to
		fwd[to] = max(fa[to]+fa[x], fc[to]+fc[x])
		fa[to] += fa[x]
		fc[to] += fc[x]
		bwd[to] += bwd[x]
		touch[to] = touch[to] || touch[x]
	}
	if !merged {
		return u
	}
	// Renumber the merged units in a topological order (merging a unit
	// into its only neighbour keeps the graph acyclic), smallest old
	// number first.
	var rs []int
	index := make([]int, n)
	for c := range n {
		if find(c) == c {
			index[c] = len(rs)
			rs = append(rs, c)
		}
	}
	succ := make([][]int, len(rs))
	var edges [][2]int
	for a := range n {
		for _, b := range u.succ[a] {
			ra, rb := index[find(a)], index[find(b)]
			if ra != rb {
				succ[ra] = append(succ[ra], rb)
				edges = append(edges, [2]int{ra, rb})
			}
		}
	}
	order := topo(len(rs), succ)
	pos := make([]int, len(rs))
	for i, c := range order {
		pos[c] = i
	}
	for i := range edges {
		edges[i] = [2]int{pos[edges[i][0]], pos[edges[i][1]]}
	}
	of := make([]int, len(g.Nodes))
	for v := range of {
		of[v] = pos[index[find(u.of[v])]]
	}
	return newUnits(g, of, len(rs), edges)
}
