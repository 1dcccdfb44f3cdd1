package compact

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The topological pass gives the least solution that relaxation gives,
// on random acyclic constraints (negative weights and constants
// included), and declines constraints with a cycle, which relaxation
// then solves or rejects.
func TestCompactorTopologicalIsRelaxation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		vars := 1 + rng.IntN(30)
		perm := rng.Perm(vars) // an order the acyclic constraints follow
		c := &compactor{vars: vars}
		for range rng.IntN(4 * vars) {
			a, b := rng.IntN(vars), rng.IntN(vars)
			w := rng.IntN(11) - 3
			switch {
			case rng.IntN(8) == 0:
				c.cons = append(c.cons, constraint{perm[a], -1, w})
			case a < b:
				c.cons = append(c.cons, constraint{perm[b], perm[a], w})
			case a == b && w <= 0:
				c.cons = append(c.cons, constraint{perm[a], perm[a], w})
			}
		}
		want, err := c.relax()
		if err != nil {
			t.Fatalf("trial %d: acyclic constraints: %v", trial, err)
		}
		got, ok := c.topological()
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("trial %d: topological %v (ok %v), relaxation %v", trial, got, ok, want)
		}
	}
	// A cycle: x0 ≥ x1 + 0, x1 ≥ x0 + 0, x1 ≥ 3.
	c := &compactor{vars: 2, cons: []constraint{{0, 1, 0}, {1, 0, 0}, {1, -1, 3}}}
	if _, ok := c.topological(); ok {
		t.Error("topological accepted a cycle")
	}
	if err := c.solve(); err != nil || !slices.Equal(c.orig, []int{3, 3}) {
		t.Errorf("cycle of zero weight: %v, %v; want [3 3]", c.orig, err)
	}
	c = &compactor{vars: 2, cons: []constraint{{0, 1, 1}, {1, 0, 1}}}
	if err := c.solve(); err == nil {
		t.Error("contradicting orders were solved")
	}
}
