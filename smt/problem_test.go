package smt_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/smttest"
	"github.com/tessel-pp/tessel/smt"
)

// TestBruteForceSelf checks the brute force on problems small enough to
// solve by hand.
func TestBruteForceSelf(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *smt.Problem
		want int // -1: infeasible
	}{
		{"two tasks one device", &smt.Problem{Devices: 1, Tasks: []smt.Task{{Devices: []int{0}, Time: 2}, {Devices: []int{0}, Time: 3}}}, 5},
		{"two devices in parallel", &smt.Problem{Devices: 2, Tasks: []smt.Task{{Devices: []int{0}, Time: 2}, {Devices: []int{1}, Time: 3}}}, 3},
		{"chain across devices", &smt.Problem{Devices: 2, Tasks: []smt.Task{{Devices: []int{0}, Time: 2}, {Devices: []int{1}, Time: 3}},
			Precs: []smt.Prec{{From: 0, To: 1}}}, 5},
		{"delay", &smt.Problem{Devices: 2, Tasks: []smt.Task{{Devices: []int{0}, Time: 2}, {Devices: []int{1}, Time: 3}},
			Precs: []smt.Prec{{From: 0, To: 1, Lag: -2}}}, 7},
		{"release", &smt.Problem{Devices: 1, Tasks: []smt.Task{{Devices: []int{0}, Time: 1, Release: 4}}}, 5},
		{"group task blocks both", &smt.Problem{Devices: 2, Tasks: []smt.Task{{Devices: []int{0, 1}, Time: 1}, {Devices: []int{0}, Time: 1}, {Devices: []int{1}, Time: 1}}}, 2},
		// Memory 1: the +1 must be freed by the −1 before the other +1.
		{"memory forces an order", &smt.Problem{Devices: 1, Memory: 1, Tasks: []smt.Task{
			{Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: -1}},
			Precs: []smt.Prec{{From: 0, To: 2}, {From: 1, To: 2}}}, -1},
		{"memory feasible", &smt.Problem{Devices: 1, Memory: 1, Tasks: []smt.Task{
			{Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: -1}},
			Precs: []smt.Prec{{From: 0, To: 2}}}, 3},
		{"entry over budget", &smt.Problem{Devices: 1, Memory: 1, Entry: []int{2}, Tasks: []smt.Task{{Devices: []int{0}, Time: 1, Memory: -1}}}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := smttest.BruteForce(c.p)
			if c.want < 0 {
				if got != nil {
					t.Fatalf("found %v for an infeasible problem", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("no schedule, want makespan %d", c.want)
			}
			if err := smttest.CheckStarts(c.p, got); err != nil {
				t.Fatalf("brute force schedule %v: %v", got, err)
			}
			if m := c.p.Makespan(got); m != c.want {
				t.Fatalf("makespan %d, want %d", m, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := func() *smt.Problem {
		return &smt.Problem{Devices: 2, Tasks: []smt.Task{{Devices: []int{0}, Time: 1}, {Devices: []int{1}, Time: 2}},
			Precs: []smt.Prec{{From: 0, To: 1}}}
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("valid problem: %v", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(p *smt.Problem)
		want   string
	}{
		{"time 0", func(p *smt.Problem) { p.Tasks[0].Time = 0 }, "time 0"},
		{"no device", func(p *smt.Problem) { p.Tasks[1].Devices = nil }, "no device"},
		{"device out of range", func(p *smt.Problem) { p.Tasks[1].Devices = []int{2} }, "device 2"},
		{"negative device", func(p *smt.Problem) { p.Tasks[1].Devices = []int{-1} }, "device -1"},
		{"precedence out of range", func(p *smt.Problem) { p.Precs[0].To = 2 }, "precedence 0 -> 2"},
		{"before out of range", func(p *smt.Problem) { p.Before = [][2]int{{0, 5}} }, "order 0 before 5"},
		{"before itself", func(p *smt.Problem) { p.Before = [][2]int{{1, 1}} }, "order 1 before 1"},
		{"entry length", func(p *smt.Problem) { p.Entry = []int{0} }, "entry memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := ok()
			c.mutate(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, c.want)
			}
			// The search refuses it too.
			if _, err := smt.MinimizeMakespan(context.Background(), p, smt.Options{}); err == nil {
				t.Fatal("MinimizeMakespan accepted an invalid problem")
			}
		})
	}
}

func TestEncodeRejectsCycle(t *testing.T) {
	p := &smt.Problem{Devices: 1, Tasks: []smt.Task{{Devices: []int{0}, Time: 1}, {Devices: []int{0}, Time: 1}},
		Precs: []smt.Prec{{From: 0, To: 1}}, Before: [][2]int{{1, 0}}}
	if _, err := smt.MinimizeMakespan(context.Background(), p, smt.Options{}); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("MinimizeMakespan = %v, want a cycle error", err)
	}
}

// TestLowerBoundAndGreedy: on random problems LowerBound never exceeds the
// brute-force optimum and is at least the simple bounds; every schedule
// Greedy returns is feasible and no better than the optimum; without a
// memory budget Greedy always finds one, delayed precedences included.
func TestLowerBoundAndGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	feasible, tight, greedyFound := 0, 0, 0
	for k := 0; k < 2000; k++ {
		p := smttest.RandomProblem(r, smttest.GenOptions{Before: k%2 == 0, Lags: k%3 == 0, Release: k%4 == 0, Entry: k%5 == 0})
		lb := p.LowerBound()
		// Simple bounds the LowerBound must include: each task from its
		// release, and each device's load.
		for d := 0; d < p.Devices; d++ {
			load := 0
			for _, tk := range p.Tasks {
				if slices.Contains(tk.Devices, d) {
					load += tk.Time
				}
			}
			if lb < load {
				t.Fatalf("problem %d: LowerBound %d below device %d load %d\n%s", k, lb, d, load, smttest.String(p))
			}
		}
		for _, tk := range p.Tasks {
			if lb < tk.Release+tk.Time {
				t.Fatalf("problem %d: LowerBound %d below a task's release+time\n%s", k, lb, smttest.String(p))
			}
		}
		opt := smttest.BruteForce(p)
		g := smt.Greedy(p)
		if g != nil {
			greedyFound++
			if err := smttest.CheckStarts(p, g); err != nil {
				t.Fatalf("problem %d: Greedy %v infeasible: %v\n%s", k, g, err, smttest.String(p))
			}
			if opt == nil {
				t.Fatalf("problem %d: Greedy found %v, brute force nothing\n%s", k, g, smttest.String(p))
			}
		}
		if opt == nil {
			continue
		}
		feasible++
		m := p.Makespan(opt)
		if lb > m {
			t.Fatalf("problem %d: LowerBound %d above the optimum %d (%v)\n%s", k, lb, m, opt, smttest.String(p))
		}
		if lb == m {
			tight++
		}
		if g != nil && p.Makespan(g) < m {
			t.Fatalf("problem %d: Greedy %d beats the brute force %d\n%s", k, p.Makespan(g), m, smttest.String(p))
		}
		if p.Memory == 0 && g == nil {
			t.Fatalf("problem %d: Greedy stuck without a memory budget\n%s", k, smttest.String(p))
		}
	}
	t.Logf("%d feasible of 2000, LowerBound tight on %d, Greedy found %d", feasible, tight, greedyFound)
	if feasible < 500 || feasible == 2000 {
		t.Fatalf("generator: %d feasible of 2000; want a mix", feasible)
	}
}

// TestFeasibleAgrees compares Problem.Feasible with smttest.CheckStarts on optimal
// schedules, their perturbations and random start vectors.
func TestFeasibleAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	yes, no := 0, 0
	for k := 0; k < 300; k++ {
		p := smttest.RandomProblem(r, smttest.GenOptions{Before: k%2 == 0, Lags: k%3 == 0, Release: k%4 == 0, Entry: k%5 == 0})
		var cands [][]int
		if opt := smttest.BruteForce(p); opt != nil {
			cands = append(cands, opt)
			for i := range opt {
				for _, delta := range []int{-1, 1, 2} {
					c := slices.Clone(opt)
					c[i] += delta
					cands = append(cands, c)
				}
			}
		}
		horizon := 0
		for _, tk := range p.Tasks {
			horizon += tk.Time
		}
		for j := 0; j < 20; j++ {
			c := make([]int, len(p.Tasks))
			for i := range c {
				c[i] = r.IntN(horizon + 1)
			}
			cands = append(cands, c)
		}
		cands = append(cands, make([]int, len(p.Tasks)-1)) // wrong length
		for _, c := range cands {
			err := smttest.CheckStarts(p, c)
			if got := p.Feasible(c); got != (err == nil) {
				t.Fatalf("problem %d: Feasible(%v) = %v, smttest.CheckStarts says %v\n%s", k, c, got, err, smttest.String(p))
			}
			if err == nil {
				yes++
			} else {
				no++
			}
		}
	}
	t.Logf("%d feasible and %d infeasible start vectors", yes, no)
	if yes < 300 || no < 300 {
		t.Fatalf("too few of one kind: %d feasible, %d infeasible", yes, no)
	}
}

// TestSatisfiableAgrees: Satisfiable answers as the brute force does. The
// solver is asked only for problems Greedy cannot do (and a few others),
// so those are drawn from many.
func TestSatisfiableAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sat, unsat, beyondGreedy := 0, 0, 0
	for k := 0; k < 3000; k++ {
		p := smttest.RandomProblem(r, smttest.GenOptions{Before: k%2 == 0, Entry: k%3 == 0})
		g := smt.Greedy(p)
		if g != nil && k%50 != 0 {
			continue
		}
		want := smttest.BruteForce(p) != nil
		if !want && unsat >= 40 {
			continue // enough of those; each takes a solver
		}
		got, err := smt.Satisfiable(context.Background(), p)
		if err != nil {
			t.Fatalf("problem %d: %v", k, err)
		}
		if got != want {
			t.Fatalf("problem %d: Satisfiable = %v, brute force %v\n%s", k, got, want, smttest.String(p))
		}
		switch {
		case !got:
			unsat++
		case g == nil:
			beyondGreedy++
		default:
			sat++
		}
	}
	t.Logf("satisfiable: %d by Greedy, %d beyond it; %d not", sat, beyondGreedy, unsat)
	if sat == 0 || unsat == 0 || beyondGreedy == 0 {
		t.Fatalf("generator: %d sat, %d beyond Greedy, %d unsat", sat, beyondGreedy, unsat)
	}
	// No tasks: only the entry memory can fail.
	for _, c := range []struct {
		p    *smt.Problem
		want bool
	}{
		{&smt.Problem{Devices: 2}, true},
		{&smt.Problem{Devices: 2, Memory: 1, Entry: []int{1, 1}}, true},
		{&smt.Problem{Devices: 2, Memory: 1, Entry: []int{0, 2}}, false},
	} {
		got, err := smt.Satisfiable(context.Background(), c.p)
		if err != nil || got != c.want {
			t.Errorf("Satisfiable(%+v) = %v, %v; want %v", c.p, got, err, c.want)
		}
	}
}

// TestGreedyWaitsForDelay: a task held back by a delayed predecessor
// (Lag < 0) after every device is free must still be started; Greedy
// once gave up here.
func TestGreedyWaitsForDelay(t *testing.T) {
	p := &smt.Problem{Devices: 2, Tasks: []smt.Task{
		{Devices: []int{0, 1}, Time: 3, Memory: -1},
		{Devices: []int{1}, Time: 2},
		{Devices: []int{1}, Time: 1},
		{Devices: []int{0}, Time: 2, Memory: 1},
	}, Precs: []smt.Prec{{From: 1, To: 2, Lag: -1}}}
	g := smt.Greedy(p)
	if g == nil {
		t.Fatal("Greedy found nothing")
	}
	if err := smttest.CheckStarts(p, g); err != nil {
		t.Fatalf("Greedy %v: %v", g, err)
	}
}
