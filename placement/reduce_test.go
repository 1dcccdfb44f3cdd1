package placement

import (
	"slices"
	"testing"
)

// A built-in lists no dependency that others imply: its skeleton is
// itself. Dependencies a path already gives (a forward to its own
// gradients on its device, as a file may list them) are dropped from
// the skeleton, and the roles read from the graph stay the kinds' own.
func TestSkeletonDropsImpliedDependencies(t *testing.T) {
	for _, name := range BuiltinNames() {
		for _, o := range []Options{{Devices: 4}, {Devices: 4, SplitBackward: true}} {
			if name == "dualpipe" && o.SplitBackward {
				continue
			}
			p, err := Builtin(name, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Skeleton() != p {
				t.Errorf("%s: the skeleton drops %d of %d dependencies", p.Name, len(p.Deps)-len(p.ReducedDeps()), len(p.Deps))
			}
		}
	}
	p, err := Builtin("v-shape", Options{Devices: 4, Chunks: 2, Order: V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	q := p.Clone()
	for i, b := range q.Blocks {
		for j, c := range q.Blocks {
			// f_i → i_i and f_i → w_i: implied by the chain.
			if b.Kind == Forward && c.Kind != Forward && b.ID[1:] == c.ID[1:] && !slices.Contains(q.Deps, Dep{From: i, To: j}) {
				q.Deps = append(q.Deps, Dep{From: i, To: j})
			}
		}
	}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := q.ReducedDeps(); !slices.Equal(got, p.Deps) {
		t.Errorf("reduced %v, want %v", got, p.Deps)
	}
	if !slices.Equal(q.Roles(), p.Roles()) {
		t.Errorf("roles %v, want %v", q.Roles(), p.Roles())
	}
}
