package z3

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
)

// vmRSS reads the resident set from /proc/self/status, in bytes.
func vmRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		testskip.Skipf(t, "no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/self/status")
	return 0
}

// TestMillionScopesFlatMemory: a long-lived context runs 1,000,000
// push/assert/pop scopes, each with a fresh literal, and its resident set
// stays flat (the "never lose", item 6). Without reference
// counting every literal stays in Z3 until the context dies: over 50 MB.
// It takes about 3 s on the project's 2-core machine.
func TestMillionScopesFlatMemory(t *testing.T) {
	testskip.Short(t, "3 s")
	const scopes, warm, every = 1_000_000, 50_000, 100_000
	x, s := newTestSolver(t, SolverOptions{})
	a := x.IntVar("a")
	s.Assert(x.Ge(a, x.IntVal(0)))
	held := len(x.held)
	var base int64
	t0 := time.Now()
	for i := 0; i < scopes; i++ {
		if i == warm {
			base = vmRSS(t)
		}
		s.Push()
		s.Assert(x.Le(a, x.IntVal(i)))
		if i%every == 0 {
			// The scope's assertion is live: a = i is the only answer.
			s.Assert(x.Ge(a, x.IntVal(i)))
			mustCheck(t, s, Sat)
			m, err := s.Model()
			if err != nil {
				t.Fatal(err)
			}
			if v, err := m.Int(a); err != nil || v != i {
				t.Fatalf("scope %d: a = %d, %v; want %d", i, v, err, i)
			}
			m.Close()
		}
		s.Pop()
	}
	grew := vmRSS(t) - base
	t.Logf("%d scopes in %v; VmRSS grew %d kB after scope %d", scopes, time.Since(t0), grew>>10, warm)
	if len(x.held) != held {
		t.Errorf("the context holds %d terms after the scopes, %d before", len(x.held), held)
	}
	if grew > 10<<20 {
		t.Fatalf("VmRSS grew by %.1f MB over %d scopes", float64(grew)/(1<<20), scopes-warm)
	}
	// The terms made before the scopes are still usable.
	s.Assert(x.Eq(a, x.IntVal(3)))
	mustCheck(t, s, Sat)
}

// TestScopeReleasesItsTerms: a term made inside a scope is an error once
// the scope is popped, even when its slot holds a newer term; terms made
// outside stay usable.
func TestScopeReleasesItsTerms(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	a := x.IntVar("a")
	s.Push()
	inner := x.Le(a, x.IntVal(1))
	s.Assert(inner)
	mustCheck(t, s, Sat)
	s.Pop()
	s.Push()
	_ = x.Ge(a, x.IntVal(9)) // reuses the slots of the popped scope
	s.Pop()
	s.Assert(x.Ge(a, x.IntVal(5))) // outer terms still fine
	mustCheck(t, s, Sat)
	if got := x.String(inner); got != "<released term>" {
		t.Errorf("String of a released term = %q", got)
	}
	m := mustModel(t, s)
	if _, err := m.Bool(inner); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("evaluating a released term: %v, want an error naming it", err)
	}
	if x.Err() != nil {
		t.Fatalf("a failed evaluation poisoned the context: %v", x.Err())
	}
	s.Assert(inner)
	if st, err := s.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "released") {
		t.Fatalf("asserting a released term: %v, %v; want an error naming it", st, err)
	}
}

// TestTermOfAnotherContext is an error, not a crash.
func TestTermOfAnotherContext(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	y, _ := newTestSolver(t, SolverOptions{})
	b := y.Le(y.IntVar("a"), y.IntVal(1))
	s.Assert(x.Not(b))
	if st, err := s.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "another context") {
		t.Fatalf("term of another context: %v, %v", st, err)
	}
}

// TestUseAfterClose: every operation on a closed context, solver or model
// is an error (or a no-op for Close), never a crash.
func TestUseAfterClose(t *testing.T) {
	x := NewContext()
	s, err := x.NewSolver(SolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := x.IntVar("a")
	s.Assert(x.Ge(a, x.IntVal(2)))
	if st, err := s.Check(context.Background()); st != Sat || err != nil {
		t.Fatalf("check: %v, %v", st, err)
	}
	m, err := s.Model()
	if err != nil {
		t.Fatal(err)
	}
	x.Close()

	isClosed := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", what, err)
		}
	}
	if _, err := m.Int(a); err == nil {
		t.Error("Model.Int after the context's Close: no error")
	} else {
		isClosed("Model.Int", err)
	}
	_, err = m.Bool(x.True())
	isClosed("Model.Bool", err)
	_, err = x.NewSolver(SolverOptions{})
	isClosed("NewSolver", err)
	for _, build := range []func(){
		func() { x.IntVar("b") },
		func() { x.BoolVar("p") },
		func() { x.IntVal(1) },
		func() { x.True() },
		func() { x.Add(a, a) },
		func() { x.Scale(3, a) },
		func() { x.Ite(x.True(), a, a) },
		func() { x.PbLe([]Bool{x.BoolVar("p")}, []int{1}, 0) },
	} {
		build()
	}
	isClosed("building terms", x.Err())
	if got := x.String(x.Le(a, a)); got != "<closed context>" {
		t.Errorf("String after Close = %q", got)
	}
	s.Push()
	s.Assert(x.Le(a, a))
	s.Pop()
	s.SetEffort(5)
	_, err = s.Check(context.Background())
	isClosed("Check", err)
	_, err = s.Model()
	isClosed("Model", err)
	m.Close()
	m.Close()
	s.Close()
	s.Close()
	x.Close()
}

// TestSolverUseAfterClose: a closed solver reports every later use; the
// context and its other solvers go on, and a model outlives its solver.
func TestSolverUseAfterClose(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	a := x.IntVar("a")
	s.Assert(x.Eq(a, x.IntVal(4)))
	mustCheck(t, s, Sat)
	m, err := s.Model()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if v, err := m.Int(a); err != nil || v != 4 {
		t.Errorf("model after its solver's Close: a = %d, %v; want 4", v, err)
	}
	m.Close()
	if _, err := m.Int(a); !errors.Is(err, ErrClosed) {
		t.Errorf("Model.Int after Close: %v, want ErrClosed", err)
	}
	s.Assert(x.Ge(a, x.IntVal(0)))
	s.Push()
	s.Pop()
	if _, err := s.Check(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Check of a closed solver: %v, want ErrClosed", err)
	}
	if _, err := s.Model(); !errors.Is(err, ErrClosed) {
		t.Errorf("Model of a closed solver: %v, want ErrClosed", err)
	}
	if x.Err() != nil {
		t.Errorf("a closed solver's misuse poisoned its context: %v", x.Err())
	}
	s2, err := x.NewSolver(SolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s2.Assert(x.Eq(a, x.IntVal(4)))
	mustCheck(t, s2, Sat)
}

// TestPopWithoutPush is an error of the solver, not a Z3 abort.
func TestPopWithoutPush(t *testing.T) {
	_, s := newTestSolver(t, SolverOptions{})
	s.Push()
	s.Pop()
	s.Pop()
	if _, err := s.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "pop without push") {
		t.Fatalf("Check after an unmatched Pop: %v", err)
	}
}

// TestScopesOfTwoSolvers: a term belongs to the context's innermost open
// scope, whichever solver opened it; a scope popped out of order releases
// nothing early.
func TestScopesOfTwoSolvers(t *testing.T) {
	x, s1 := newTestSolver(t, SolverOptions{})
	s2, err := x.NewSolver(SolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	a := x.IntVar("a")
	s1.Push()
	t1 := x.Ge(a, x.IntVal(1)) // s1's scope
	s2.Push()
	t2 := x.Ge(a, x.IntVal(2)) // s2's scope, the innermost
	s1.Pop()                   // out of order: nothing released yet
	s1.Assert(t1, t2)
	mustCheck(t, s1, Sat)
	s2.Pop() // releases t2; t1, made before s2's scope, lives on
	s1.Assert(t1)
	mustCheck(t, s1, Sat)
	s1.Assert(t2)
	if _, err := s1.Check(context.Background()); err == nil {
		t.Fatal("a term of a popped scope was accepted")
	}
}

// TestCloseIdempotent: every Close twice, in every order, and of values
// never made.
func TestCloseIdempotent(t *testing.T) {
	var nilCtx *Context
	var nilSolver *Solver
	var nilModel *Model
	nilCtx.Close()
	nilSolver.Close()
	nilModel.Close()
	(&Context{}).Close()
	x := NewContext()
	s, err := x.NewSolver(SolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s, Sat)
	m, err := s.Model()
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	m.Close()
	s.Close()
	s.Close()
	x.Close()
	x.Close()
}
