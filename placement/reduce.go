package placement

// ReducedDeps returns the dependencies of p that no path through other
// blocks implies — the transitive reduction of its graph — in the order
// of Deps. A schedule keeps every dependency; the shape of a placement (a
// chain of stages, a split backward, which block a gradient follows)
// reads from these alone, so that a file that also lists a dependency a
// chain already gives (f_i → b_i beside f_i → … → b_i) has the shape of
// one that does not. nil when p has a cycle.
func (p *Placement) ReducedDeps() []Dep {
	order, ok := p.Topo()
	if !ok {
		return nil
	}
	k := len(p.Blocks)
	words := (k + 63) / 64
	// below[i]: the blocks reachable from i by a path of one or more
	// dependencies, as a bit set.
	below := make([][]uint64, k)
	succs := p.Succs()
	for x := k - 1; x >= 0; x-- {
		i := order[x]
		set := make([]uint64, words)
		for _, s := range succs[i] {
			set[s/64] |= 1 << (s % 64)
			for w, v := range below[s] {
				set[w] |= v
			}
		}
		below[i] = set
	}
	out := make([]Dep, 0, len(p.Deps))
	for _, d := range p.Deps {
		implied := false
		for _, s := range succs[d.From] {
			if s != d.To && below[s][d.To/64]&(1<<(d.To%64)) != 0 {
				implied = true
				break
			}
		}
		if !implied {
			out = append(out, d)
		}
	}
	return out
}

// Skeleton is p with the dependencies of ReducedDeps alone (sharing
// everything else with p), or p itself when none is implied by others or
// p has a cycle: the graph to read a placement's shape from, never to
// time a schedule on.
func (p *Placement) Skeleton() *Placement {
	deps := p.ReducedDeps()
	if deps == nil || len(deps) == len(p.Deps) {
		return p
	}
	q := *p
	q.Deps = deps
	return &q
}
