package placement

// ReducedDeps returns the dependencies of p that no path through other
// blocks implies — the transitive reduction of its graph — in the order
// of Deps. A schedule keeps every dependency; the shape of a placement (a
// chain of stages, a split backward, which block a gradient follows)
// reads from these alone, so that a file that also lists a dependency a
// chain already gives (f_i → b_i beside f_i → … → b_i) has the shape of
// one that does not. nil when p has a cycle.
func (p *Placement) ReducedDeps() []Dep {
	reach := p.Reach()
	if reach == nil {
		return nil
	}
	succs := p.Succs()
	out := make([]Dep, 0, len(p.Deps))
	for _, d := range p.Deps {
		implied := false
		for _, s := range succs[d.From] {
			if s != d.To && reach.Has(s, d.To) {
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

// Reach says which blocks depend on which through a path of one or more
// dependencies, as a bit set per block.
type Reach [][]uint64

// Has reports whether block to depends on block from through a path.
func (r Reach) Has(from, to int) bool { return r[from][to/64]&(1<<(to%64)) != 0 }

// Reach is p's Reach; nil when p has a cycle.
func (p *Placement) Reach() Reach {
	order, ok := p.Topo()
	if !ok {
		return nil
	}
	k := len(p.Blocks)
	words := (k + 63) / 64
	reach := make(Reach, k)
	succs := p.Succs()
	for x := k - 1; x >= 0; x-- {
		i := order[x]
		set := make([]uint64, words)
		for _, s := range succs[i] {
			set[s/64] |= 1 << (s % 64)
			for w, v := range reach[s] {
				set[w] |= v
			}
		}
		reach[i] = set
	}
	return reach
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
