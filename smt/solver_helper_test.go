package smt

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/z3"
)

// newTestSolver makes a context and a solver closed at the end of the test.
func newTestSolver(t testing.TB, opt z3.SolverOptions) (*z3.Context, *z3.Solver) {
	t.Helper()
	x := z3.NewContext()
	t.Cleanup(x.Close)
	s, err := x.NewSolver(opt)
	if err != nil {
		t.Fatalf("NewSolver: %v", err)
	}
	t.Cleanup(s.Close)
	return x, s
}

// mustCheck fails the test unless s checks to want.
func mustCheck(t *testing.T, s *z3.Solver, want z3.Status) {
	t.Helper()
	got, err := s.Check(context.Background())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got != want {
		t.Fatalf("Check = %v, want %v", got, want)
	}
}
