package smt_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tessel-pp/tessel/internal/smttest"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/z3"
)

// Jackson's preemptive bound sees what the earliest-start + load + tail
// bound does not: a device that must wait for a late release, and a long
// tail that must start early.
func TestLowerBoundJackson(t *testing.T) {
	for _, c := range []struct {
		name string
		p    smt.Problem
		want int
	}{
		{"release gap", smt.Problem{Devices: 1, Tasks: []smt.Task{
			{Name: "a", Devices: []int{0}, Time: 1},
			{Name: "b", Devices: []int{0}, Time: 1, Release: 5},
		}}, 6},
		{"tail first", smt.Problem{Devices: 2, Tasks: []smt.Task{
			{Name: "a", Devices: []int{0}, Time: 2},
			{Name: "b", Devices: []int{0}, Time: 2},
			{Name: "c", Devices: []int{1}, Time: 4},
		}, Precs: []smt.Prec{{From: 1, To: 2}}}, 6},
	} {
		if got := c.p.LowerBound(); got != c.want {
			t.Errorf("%s: lower bound %d, want %d", c.name, got, c.want)
		}
		sol, err := smt.MinimizeMakespan(t.Context(), &c.p, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !sol.Proven || sol.Makespan != c.want {
			t.Errorf("%s: makespan %d proven %v, want %d", c.name, sol.Makespan, sol.Proven, c.want)
		}
	}
}

// barrierProblem: 2–3 devices, 5–8 tasks of time 1–3, about a third of
// them on every device (barriers), the rest on one device, a random DAG
// of precedences (some with an extra delay, Lag −1), some late releases,
// Before pairs, and no memory budget unless memory is set (the bounds
// ignore memory, which only raises the optimum).
func barrierProblem(r *rand.Rand, memory bool) *smt.Problem {
	p := &smt.Problem{Devices: 2 + r.IntN(2)}
	if memory {
		p.Memory = 1 + r.IntN(2)
	}
	n := 5 + r.IntN(4)
	for i := 0; i < n; i++ {
		t := smt.Task{Name: fmt.Sprintf("t%d", i), Time: 1 + r.IntN(3), Memory: []int{-1, 0, 1}[r.IntN(3)]}
		if r.IntN(3) == 0 {
			t.Devices = r.Perm(p.Devices)
		} else {
			t.Devices = []int{r.IntN(p.Devices)}
		}
		if r.IntN(6) == 0 {
			t.Release = 1 + r.IntN(3)
		}
		p.Tasks = append(p.Tasks, t)
	}
	order := r.Perm(n)
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			switch k := r.IntN(10); {
			case k < 3:
				pr := smt.Prec{From: order[a], To: order[b]}
				if r.IntN(4) == 0 {
					pr.Lag = -1
				}
				p.Precs = append(p.Precs, pr)
			case k < 4:
				p.Before = append(p.Before, [2]int{order[a], order[b]})
			}
		}
	}
	return p
}

// Property: LowerBound never exceeds the optimum (brute force) on
// problems with barriers, and its barrier relaxation (withoutBarriers)
// is what makes it exceed the bound of the problem as it is on some of
// them, so the test would see an unsound relaxation.
func TestBarrierBoundBelowOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	cases := 3000
	if testing.Short() {
		cases = 600
	}
	bites, tight, feasible := 0, 0, 0
	for k := range cases {
		p := barrierProblem(r, k%4 == 0)
		opt := smttest.BruteForce(p)
		if opt == nil {
			continue
		}
		feasible++
		m, lb := p.Makespan(opt), p.LowerBound()
		if lb > m {
			t.Fatalf("problem %d: LowerBound %d above the optimum %d (%v)\n%s", k, lb, m, opt, smttest.String(p))
		}
		if pj, _ := p.PathAndJackson(); lb > pj {
			bites++
			if lb == m {
				tight++
			}
		}
	}
	t.Logf("%d feasible of %d; the barrier relaxation raised the bound on %d, to the optimum on %d", feasible, cases, bites, tight)
	if bites < cases/50 || tight == 0 {
		t.Fatalf("the barrier relaxation raised the bound on %d problems (%d to the optimum): the test checks too little", bites, tight)
	}
}

// Property: the load cuts (Encoder.LoadCuts) keep every schedule: with
// them, the solver still finds a schedule of the optimal makespan, and
// none shorter, on problems with and without barriers.
func TestLoadCutsKeepOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	cases := 300
	if testing.Short() {
		cases = 60
	}
	checked := 0
	for k := 0; checked < cases; k++ {
		var p *smt.Problem
		if k%2 == 0 {
			p = barrierProblem(r, k%4 == 0)
		} else {
			p = smttest.RandomProblem(r, smttest.GenOptions{Before: true, Lags: k%3 == 0, Release: k%5 == 0, Entry: k%7 == 0})
		}
		opt := smttest.BruteForce(p)
		if opt == nil {
			continue
		}
		checked++
		m := p.Makespan(opt)
		for _, c := range []struct {
			bound int
			want  z3.Status
		}{{m, z3.Sat}, {m - 1, z3.Unsat}} {
			x := z3.NewContext()
			s, err := x.NewSolver(z3.SolverOptions{})
			if err != nil {
				t.Fatal(err)
			}
			e, err := smt.Encode(x, s, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			e.LoadCuts()
			s.Push()
			e.BoundMakespan(c.bound)
			st, err := s.Check(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if st != c.want {
				t.Fatalf("problem %d: makespan ≤ %d is %v with the cuts, want %v (optimum %d)\n%s", k, c.bound, st, c.want, m, smttest.String(p))
			}
			s.Close()
			x.Close()
		}
	}
}
