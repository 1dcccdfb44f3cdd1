package system

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// The topological pass gives the least solution that relaxation gives,
// on random acyclic constraints (negative weights, constants and floors
// included), and declines constraints with a cycle, which relaxation
// then solves or rejects.
func TestTopologicalIsRelaxation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		vars := 1 + rng.IntN(30)
		perm := rng.Perm(vars) // an order the acyclic constraints follow
		s := &System{Vars: vars}
		for range rng.IntN(4 * vars) {
			a, b := rng.IntN(vars), rng.IntN(vars)
			w := rng.IntN(11) - 3
			switch {
			case rng.IntN(8) == 0:
				s.Add(perm[a], -1, w)
			case rng.IntN(8) == 0:
				s.Least(perm[a], w)
			case a < b:
				s.Add(perm[b], perm[a], w)
			case a == b && w <= 0:
				s.Add(perm[a], perm[a], w)
			}
		}
		want, err := s.Relax()
		if err != nil {
			t.Fatalf("trial %d: acyclic constraints: %v", trial, err)
		}
		got, ok := s.Topological(nil)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("trial %d: topological %v (ok %v), relaxation %v", trial, got, ok, want)
		}
		s.Hint = make([]int, vars)
		for v := range s.Hint {
			s.Hint[v] = rng.IntN(20)
		}
		if got, err := s.Relax(); err != nil || !slices.Equal(got, want) {
			t.Fatalf("trial %d: relaxation with a hint %v (%v), without %v", trial, got, err, want)
		}
	}
	// A cycle: x0 ≥ x1 + 0, x1 ≥ x0 + 0, x1 ≥ 3.
	s := &System{Vars: 2, Cons: []Constraint{{0, 1, 0}, {1, 0, 0}, {1, -1, 3}}}
	if _, ok := s.Topological(nil); ok {
		t.Error("topological accepted a cycle")
	}
	if got, err := s.Solve(); err != nil || !slices.Equal(got, []int{3, 3}) {
		t.Errorf("cycle of zero weight: %v, %v; want [3 3]", got, err)
	}
	s = &System{Vars: 2, Cons: []Constraint{{0, 1, 1}, {1, 0, 1}}}
	if _, err := s.Solve(); !errors.Is(err, ErrContradict) {
		t.Errorf("contradicting constraints: %v, want ErrContradict", err)
	}
}

// Cycle names the constraints of a cycle in order, each from the
// previous one's variable, and nothing where there is no cycle.
func TestCycle(t *testing.T) {
	// 0 → 1 → 2 → 3 → 1, and 3 → 4 outside the cycle.
	s := &System{Vars: 5}
	s.Add(1, 0, 1)
	s.Add(2, 1, 1)
	s.Add(3, 2, 1)
	s.Add(1, 3, 1)
	s.Add(4, 3, 1)
	got := s.Cycle()
	if len(got) != 3 {
		t.Fatalf("cycle %v, want 3 constraints", got)
	}
	for i, e := range got {
		next := s.Cons[got[(i+1)%len(got)]]
		if s.Cons[e].X != next.Y {
			t.Fatalf("cycle %v is not a cycle", got)
		}
	}
	acyclic := &System{Vars: 2, Cons: []Constraint{{1, 0, 1}}}
	if got := acyclic.Cycle(); got != nil {
		t.Errorf("acyclic constraints: cycle %v", got)
	}
}

// The visit of the topological pass sees each variable once, its value
// final, in the pass's order, and may raise a later variable.
func TestTopologicalVisit(t *testing.T) {
	s := &System{Vars: 3}
	s.Add(1, 0, 2)
	s.Add(2, 0, 1)
	var order []int
	got, ok := s.Topological(func(v int, start []int) {
		order = append(order, v)
		if v == 0 {
			start[2] = 10
		}
	})
	if !ok || !slices.Equal(order, []int{0, 1, 2}) || !slices.Equal(got, []int{0, 2, 10}) {
		t.Errorf("visit order %v, starts %v (ok %v); want [0 1 2], [0 2 10]", order, got, ok)
	}
}
