package partition

import "fmt"

// The baselines cut a topological order of the contracted graph (colour
// classes and strongly connected components together, as the DP sees it)
// into consecutive pieces, one per accelerator, so their splits are
// contiguous and keep every colocation; they use no CPU. They show what
// the DP buys.

// Even splits the model into the graph's accelerators with the same number
// of layers (units of the contracted graph) on each, the first ones taking
// one more where the count does not divide.
func Even(g *Graph) (*Split, error) {
	u, order, err := unitOrder(g)
	if err != nil {
		return nil, err
	}
	k := g.Accelerators
	if k < 1 {
		return nil, fmt.Errorf("even split: no accelerator")
	}
	piece := make([]int, u.n)
	base, extra := len(order)/k, len(order)%k
	pos := 0
	for d := range k {
		n := base
		if d < extra {
			n++
		}
		for range n {
			piece[order[pos]] = d
			pos++
		}
	}
	return unitSplit(g, u, piece)
}

// Greedy fills the accelerators one after the other in topological order,
// moving on once the next layer would take the device past an equal share
// of the total accelerator time or past the memory cap (the greedy
// baseline of Tarnawski et al., §7, with the equal share added so that it spreads
// the load); the last accelerator takes what is left.
func Greedy(g *Graph) (*Split, error) {
	u, order, err := unitOrder(g)
	if err != nil {
		return nil, err
	}
	k := g.Accelerators
	if k < 1 {
		return nil, fmt.Errorf("greedy split: no accelerator")
	}
	total := 0.0
	for x := range u.n {
		total += u.acc[x]
	}
	share := total / float64(k)
	piece := make([]int, u.n)
	d, load, mem, count := 0, 0.0, 0.0, 0
	for _, x := range order {
		over := count > 0 && (load+u.acc[x] > share*(1+1e-12) || g.Memory > 0 && mem+u.size[x] > g.Memory)
		if over && d < k-1 {
			d, load, mem, count = d+1, 0, 0, 0
		}
		piece[x] = d
		load += u.acc[x]
		mem += u.size[x]
		count++
	}
	return unitSplit(g, u, piece)
}

func unitOrder(g *Graph) (*units, []int, error) {
	if err := g.Validate(); err != nil {
		return nil, nil, err
	}
	u, err := contract(g)
	if err != nil {
		return nil, nil, err
	}
	return u, topo(u.n, u.succ), nil
}

func unitSplit(g *Graph, u *units, piece []int) (*Split, error) {
	dev := make([]int, len(g.Nodes))
	for v := range dev {
		dev[v] = piece[u.of[v]]
	}
	return NewSplit(g, dev)
}
