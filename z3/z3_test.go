package z3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
)

// newTestSolver makes a context and a solver closed at the end of the test.
func newTestSolver(t testing.TB, opt SolverOptions) (*Context, *Solver) {
	t.Helper()
	x := NewContext()
	t.Cleanup(x.Close)
	s, err := x.NewSolver(opt)
	if err != nil {
		t.Fatalf("NewSolver: %v", err)
	}
	t.Cleanup(s.Close)
	return x, s
}

func mustCheck(t *testing.T, s *Solver, want Status) {
	t.Helper()
	got, err := s.Check(context.Background())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got != want {
		t.Fatalf("Check = %v, want %v", got, want)
	}
}

func mustModel(t *testing.T, s *Solver) *Model {
	t.Helper()
	m, err := s.Model()
	if err != nil {
		t.Fatalf("Model: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

func TestStatusString(t *testing.T) {
	for _, c := range []struct {
		s    Status
		want string
	}{{Sat, "sat"}, {Unsat, "unsat"}, {Unknown, "unknown"}} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%d.String() = %q, want %q", int(c.s), got, c.want)
		}
	}
}

func TestVersion(t *testing.T) {
	v := Version()
	if !regexp.MustCompile(`^4\.\d+\.\d+$`).MatchString(v) {
		t.Fatalf("Version() = %q, want 4.x.y", v)
	}
}

func TestCheckSatUnsat(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(x *Context) []Bool
		want  Status
	}{
		{"empty", func(x *Context) []Bool { return nil }, Sat},
		{"true", func(x *Context) []Bool { return []Bool{x.True()} }, Sat},
		{"false", func(x *Context) []Bool { return []Bool{x.False()} }, Unsat},
		{"a<b<a", func(x *Context) []Bool {
			a, b := x.IntVar("a"), x.IntVar("b")
			return []Bool{x.Lt(a, b), x.Lt(b, a)}
		}, Unsat},
		{"a<=b<=a", func(x *Context) []Bool {
			a, b := x.IntVar("a"), x.IntVar("b")
			return []Bool{x.Le(a, b), x.Le(b, a)}
		}, Sat},
		{"p and not p", func(x *Context) []Bool {
			p := x.BoolVar("p")
			return []Bool{p, x.Not(p)}
		}, Unsat},
		{"integrality 2a=1", func(x *Context) []Bool {
			a := x.IntVar("a")
			return []Bool{x.Eq(x.Scale(2, a), x.IntVal(1))}
		}, Unsat},
		{"empty Or is false", func(x *Context) []Bool { return []Bool{x.Or()} }, Unsat},
		{"empty And is true", func(x *Context) []Bool { return []Bool{x.And()} }, Sat},
		{"empty PbLe with k<0", func(x *Context) []Bool { return []Bool{x.PbLe(nil, nil, -1)} }, Unsat},
		{"empty PbLe with k=0", func(x *Context) []Bool { return []Bool{x.PbLe(nil, nil, 0)} }, Sat},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, s := newTestSolver(t, SolverOptions{})
			s.Assert(c.build(x)...)
			mustCheck(t, s, c.want)
		})
	}
}

// TestCheckUnknown: nonlinear integer arithmetic with a tiny effort cannot
// be decided; the answer is Unknown with ErrEffort, never Sat or Unsat.
func TestCheckUnknown(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{Effort: 1})
	a, b, c := x.IntVar("a"), x.IntVar("b"), x.IntVar("c")
	// a³ + b³ = c³ with positive integers: no solution, and no decision
	// procedure either.
	cube := func(v Int) Int { return x.Mul(v, x.Mul(v, v)) }
	s.Assert(x.Gt(a, x.IntVal(0)), x.Gt(b, x.IntVal(0)), x.Gt(c, x.IntVal(0)),
		x.Eq(x.Add(cube(a), cube(b)), cube(c)))
	st, err := s.Check(context.Background())
	if st != Unknown || !errors.Is(err, ErrEffort) {
		t.Fatalf("Check = %v, %v; want unknown and ErrEffort", st, err)
	}
}

func TestModelEvaluation(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	a, b, c := x.IntVar("a"), x.IntVar("b"), x.IntVar("c")
	p, q := x.BoolVar("p"), x.BoolVar("q")
	s.Assert(
		x.Eq(a, x.IntVal(7)),
		x.Eq(b, x.Sub(a, x.IntVal(10))),                 // b = -3
		x.Eq(c, x.Ite(p, x.Plus(a, 5), x.Scale(-2, b))), // p holds: c = 12
		p, x.Not(q),
	)
	mustCheck(t, s, Sat)
	m := mustModel(t, s)
	ints := []struct {
		name string
		term Int
		want int
	}{
		{"a", a, 7},
		{"b", b, -3},
		{"c = ite(p, a+5, -2b)", c, 12},
		{"ite(q, ...)", x.Ite(q, a, b), -3},
		{"a+b+c", x.Add(a, b, c), 16},
		{"a-b", x.Sub(a, b), 10},
		{"a*b", x.Mul(a, b), -21},
		{"0*a", x.Scale(0, a), 0},
		{"1*a", x.Scale(1, a), 7},
		{"a+0", x.Plus(a, 0), 7},
		{"empty sum", x.Add(), 0},
		{"literal", x.IntVal(-1 << 40), -1 << 40},
	}
	for _, c := range ints {
		got, err := m.Int(c.term)
		if err != nil || got != c.want {
			t.Errorf("%s = %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	bools := []struct {
		name string
		term Bool
		want bool
	}{
		{"p", p, true},
		{"q", q, false},
		{"not q", x.Not(q), true},
		{"p and q", x.And(p, q), false},
		{"p and not q", x.And(p, x.Not(q)), true},
		{"p or q", x.Or(p, q), true},
		{"q or q", x.Or(q, q), false},
		{"q implies p", x.Implies(q, p), true},
		{"p implies q", x.Implies(p, q), false},
		{"q implies q", x.Implies(q, q), true},
		{"a < b", x.Lt(a, b), false},
		{"a > b", x.Gt(a, b), true},
		{"a >= 7", x.Ge(a, x.IntVal(7)), true},
		{"a <= 6", x.Le(a, x.IntVal(6)), false},
		{"a = 7", x.Eq(a, x.IntVal(7)), true},
		{"true", x.True(), true},
		{"false", x.False(), false},
	}
	for _, c := range bools {
		got, err := m.Bool(c.term)
		if err != nil || got != c.want {
			t.Errorf("%s = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	// An unconstrained variable is completed with some value.
	if _, err := m.Int(x.IntVar("free")); err != nil {
		t.Errorf("free variable: %v", err)
	}
	if _, err := m.Bool(x.BoolVar("freeb")); err != nil {
		t.Errorf("free Boolean: %v", err)
	}
}

// TestPbLe checks Σ c_i·[b_i] ≤ k, negative coefficients included, against
// every assignment of three Booleans.
func TestPbLe(t *testing.T) {
	for _, c := range []struct {
		coeffs []int
		k      int
	}{
		{[]int{1, 1, 1}, 1},
		{[]int{2, 3, 1}, 3},
		{[]int{1, -1, 1}, 0},
		{[]int{-2, 1, 3}, -1},
		{[]int{-1, -1, -1}, -2},
		{[]int{5, -3, 2}, 2},
		{[]int{1, 1, 1}, -1}, // never
		{[]int{1, 1, 1}, 3},  // always
	} {
		t.Run(fmt.Sprint(c.coeffs, c.k), func(t *testing.T) {
			x, s := newTestSolver(t, SolverOptions{})
			bs := []Bool{x.BoolVar("b0"), x.BoolVar("b1"), x.BoolVar("b2")}
			pb := x.PbLe(bs, c.coeffs, c.k)
			for mask := 0; mask < 8; mask++ {
				sum := 0
				var fix []Bool
				for i := range bs {
					if mask&(1<<i) != 0 {
						sum += c.coeffs[i]
						fix = append(fix, bs[i])
					} else {
						fix = append(fix, x.Not(bs[i]))
					}
				}
				want := sum <= c.k
				s.Push()
				s.Assert(fix...)
				// Evaluated in a model and decided by the solver.
				mustCheck(t, s, Sat)
				m := mustModel(t, s)
				got, err := m.Bool(pb)
				if err != nil || got != want {
					t.Errorf("mask %03b: PbLe evaluates to %v, %v; want %v", mask, got, err, want)
				}
				s.Assert(pb)
				st, err := s.Check(context.Background())
				if err != nil || (st == Sat) != want {
					t.Errorf("mask %03b: PbLe asserted: %v, %v; want sat=%v", mask, st, err, want)
				}
				s.Pop()
			}
		})
	}
}

func TestPushPop(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	a := x.IntVar("a")
	s.Assert(x.Ge(a, x.IntVal(3)))
	s.Push()
	s.Assert(x.Le(a, x.IntVal(2)))
	mustCheck(t, s, Unsat)
	s.Pop()
	mustCheck(t, s, Sat)
	// Nested scopes drop only their own assertions.
	s.Push()
	s.Assert(x.Le(a, x.IntVal(5)))
	s.Push()
	s.Assert(x.Eq(a, x.IntVal(6)))
	mustCheck(t, s, Unsat)
	s.Pop()
	mustCheck(t, s, Sat)
	if v, err := mustModel(t, s).Int(a); err != nil || v < 3 || v > 5 {
		t.Fatalf("a = %d, %v; want in 3..5", v, err)
	}
	s.Pop()
	s.Assert(x.Eq(a, x.IntVal(6)))
	mustCheck(t, s, Sat)
	if v, err := mustModel(t, s).Int(a); err != nil || v != 6 {
		t.Fatalf("a = %d, %v; want 6", v, err)
	}
}

// pigeonhole asserts that n pigeons sit in n-1 holes, one per hole: unsat,
// and exponentially hard for resolution-based solvers.
func pigeonhole(x *Context, s *Solver, n int) {
	holes := n - 1
	in := make([][]Bool, n)
	for p := range in {
		in[p] = make([]Bool, holes)
		for h := range in[p] {
			in[p][h] = x.BoolVar(fmt.Sprintf("p%d_h%d", p, h))
		}
		s.Assert(x.Or(in[p]...))
	}
	for h := 0; h < holes; h++ {
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				s.Assert(x.Not(x.And(in[p][h], in[q][h])))
			}
		}
	}
	// The same as integers, so arithmetic reasoning does not shortcut it.
	hole := make([]Int, n)
	for p := range hole {
		hole[p] = x.IntVar(fmt.Sprintf("hole%d", p))
		s.Assert(x.Ge(hole[p], x.IntVal(0)), x.Lt(hole[p], x.IntVal(holes)))
		for h := 0; h < holes; h++ {
			s.Assert(x.Implies(in[p][h], x.Eq(hole[p], x.IntVal(h))))
		}
	}
}

func TestEffortIsDeterministic(t *testing.T) {
	run := func() (Status, error) {
		x, s := newTestSolver(t, SolverOptions{Effort: 20000})
		pigeonhole(x, s, 12)
		return s.Check(context.Background())
	}
	st1, err1 := run()
	st2, err2 := run()
	if !errors.Is(err1, ErrEffort) {
		t.Fatalf("first run: %v, %v; want ErrEffort", st1, err1)
	}
	if st1 != Unknown || st2 != st1 || !errors.Is(err2, ErrEffort) {
		t.Fatalf("runs differ or are not unknown: %v %v / %v %v", st1, err1, st2, err2)
	}
	if errors.Is(err1, ErrInterrupted) {
		t.Fatalf("effort reported as interruption: %v", err1)
	}
}

// TestEffortEnough: an easy problem within its effort is decided.
func TestEffortEnough(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{Effort: 1_000_000})
	pigeonhole(x, s, 3)
	mustCheck(t, s, Unsat)
}

func TestCheckInterruptedByDeadline(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	pigeonhole(x, s, 12)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	st, err := s.Check(ctx)
	took := time.Since(t0)
	if st != Unknown || !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Check = %v, %v; want unknown, ErrInterrupted and DeadlineExceeded", st, err)
	}
	if errors.Is(err, ErrEffort) {
		t.Fatalf("interruption reported as effort: %v", err)
	}
	if took > 3*time.Second {
		t.Fatalf("interrupted check took %v", took)
	}
	// The solver stays usable after an interruption.
	s.Push()
	s.Assert(x.False())
	mustCheck(t, s, Unsat)
	s.Pop()
}

func TestCheckInterruptedByCancel(t *testing.T) {
	_, s := newTestSolver(t, SolverOptions{})
	x := s.x
	pigeonhole(x, s, 12)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	t0 := time.Now()
	st, err := s.Check(ctx)
	if st != Unknown || !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Check = %v, %v; want unknown, ErrInterrupted and Canceled", st, err)
	}
	if took := time.Since(t0); took > 3*time.Second {
		t.Fatalf("cancelled check took %v", took)
	}
}

func TestCheckAlreadyCancelled(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	pigeonhole(x, s, 12)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	st, err := s.Check(ctx)
	if st != Unknown || !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Check = %v, %v; want unknown, ErrInterrupted and Canceled", st, err)
	}
	if took := time.Since(t0); took > 100*time.Millisecond {
		t.Fatalf("check with a cancelled context took %v", took)
	}
}

// TestInterruptDoesNotLeak: a check that finished before its deadline is
// not hit by a late interrupt on the next, unrelated check.
func TestInterruptDoesNotLeak(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	a := x.IntVar("a")
	s.Assert(x.Ge(a, x.IntVal(0)))
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond)
		_, _ = s.Check(ctx) // may or may not be interrupted
		cancel()
		mustCheck(t, s, Sat)
	}
}

func TestModelWithoutCheckIsError(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	s.Assert(x.Ge(x.IntVar("a"), x.IntVal(0)))
	m, err := s.Model()
	if err == nil {
		m.Close()
		t.Fatal("Model before any check: no error")
	}
	if !strings.Contains(err.Error(), "z3") {
		t.Errorf("error %q does not say it comes from z3", err)
	}
}

func TestModelAfterUnsatIsError(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	s.Assert(x.False())
	mustCheck(t, s, Unsat)
	m, err := s.Model()
	if err == nil {
		m.Close()
		t.Fatal("Model after unsat: no error")
	}
}

// TestNonNumeralEvaluation: a Boolean term passed off as an integer cannot
// be read as a numeral; the binding says so instead of crashing.
func TestNonNumeralEvaluation(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	p := x.BoolVar("p")
	s.Assert(p)
	mustCheck(t, s, Sat)
	m := mustModel(t, s)
	if v, err := m.Int(Int(p)); err == nil {
		t.Fatalf("Int of a Boolean = %d, want an error", v)
	}
	if v, err := m.Bool(Bool(x.IntVal(3))); err == nil {
		t.Fatalf("Bool of an integer = %v, want an error", v)
	}
}

func TestCloseTwice(t *testing.T) {
	x := NewContext()
	s, err := x.NewSolver(SolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	s.Close() // after the context: must not touch freed memory
	x.Close()
}

func TestString(t *testing.T) {
	x := NewContext()
	defer x.Close()
	got := x.String(x.Le(x.IntVar("a"), x.IntVal(3)))
	if got != "(<= a 3)" {
		t.Fatalf("String = %q", got)
	}
}

func rssBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		testskip.Skipf(t, "no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatalf("statm %q: %v", b, err)
	}
	return pages * int64(os.Getpagesize())
}

// TestNoLeak makes and frees many contexts, solvers and models (3000
// solves): the resident set must level off. A solver costs milliseconds to
// make, so each context serves several solves.
func TestNoLeak(t *testing.T) {
	testskip.Short(t, "slow")
	const contexts, solves, warm = 600, 5, 100
	var base int64
	t0 := time.Now()
	for i := 0; i < contexts; i++ {
		if i == warm {
			base = rssBytes(t)
		}
		x := NewContext()
		s, err := x.NewSolver(SolverOptions{Seed: i})
		if err != nil {
			t.Fatal(err)
		}
		a, b := x.IntVar("a"), x.IntVar("b")
		bs := []Bool{x.BoolVar("p"), x.BoolVar("q")}
		s.Assert(x.Lt(a, b), x.PbLe(bs, []int{1, 1}, 1), x.Implies(bs[0], x.Gt(b, x.Plus(a, 3))))
		for k := 0; k < solves; k++ {
			s.Push()
			s.Assert(x.Ge(a, x.IntVal(i+k)))
			st, err := s.Check(context.Background())
			if err != nil || st != Sat {
				t.Fatalf("context %d solve %d: %v, %v", i, k, st, err)
			}
			m, err := s.Model()
			if err != nil {
				t.Fatal(err)
			}
			if v, err := m.Int(a); err != nil || v < i+k {
				t.Fatalf("context %d solve %d: a = %d, %v", i, k, v, err)
			}
			m.Close()
			s.Pop()
		}
		s.Close()
		x.Close()
	}
	grew := rssBytes(t) - base
	t.Logf("%d contexts, %d solves in %v; RSS grew %d kB after context %d", contexts, contexts*solves, time.Since(t0), grew/1024, warm)
	if grew > 50<<20 {
		t.Fatalf("RSS grew by %d MB over %d contexts", grew>>20, contexts-warm)
	}
}

// An ill-sorted term (reachable only by converting between Int and Bool)
// or a zero-value term comes back as an error from Check, never as an
// answer or a crash.
func TestTermErrorsSurface(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	s.Assert(x.Le(Int(x.True()), x.IntVal(1))) // Bool ≤ Int
	if st, err := s.Check(context.Background()); err == nil {
		t.Fatalf("ill-sorted term: %v, no error", st)
	}
	y, s2 := newTestSolver(t, SolverOptions{})
	s2.Assert(y.And(Bool{}, y.True()))
	if st, err := s2.Check(context.Background()); err == nil || y.Err() == nil {
		t.Fatalf("zero-value term: %v, %v", st, err)
	}
	z, _ := newTestSolver(t, SolverOptions{})
	z.PbLe([]Bool{z.True()}, nil, 1)
	if z.Err() == nil {
		t.Fatal("PbLe with too few coefficients accepted")
	}
}

// A failed Model call is an error of that call only: the context goes on.
func TestFailedModelDoesNotPoison(t *testing.T) {
	x, s := newTestSolver(t, SolverOptions{})
	if _, err := s.Model(); err == nil {
		t.Fatal("Model before any check succeeded")
	}
	s.Assert(x.Gt(x.IntVar("a"), x.IntVal(0)))
	if st, err := s.Check(context.Background()); st != Sat || err != nil {
		t.Fatalf("check after a failed Model: %v, %v", st, err)
	}
}

// A solver that gives up on its own ("incomplete (theory arithmetic)")
// decided nothing, like one that ran out of effort: callers that keep
// their best answer on ErrEffort keep it here too, and the message keeps
// Z3's reason.
func TestGaveUpIsEffort(t *testing.T) {
	err := error(gaveUp("incomplete (theory arithmetic)"))
	if !errors.Is(err, ErrEffort) || !errors.Is(err, ErrIncomplete) || errors.Is(err, ErrInterrupted) {
		t.Errorf("gave up: Is(ErrEffort, ErrIncomplete, ErrInterrupted) = %v %v %v, want true true false",
			errors.Is(err, ErrEffort), errors.Is(err, ErrIncomplete), errors.Is(err, ErrInterrupted))
	}
	if got, want := fmt.Errorf("repetend: %w", err).Error(), "repetend: smt: solver gave up: incomplete (theory arithmetic)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
