package smt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// checkStarts is the tests' own verdict on a schedule of a Problem,
// written apart from Problem.Feasible: releases, precedences without
// period, Before, no two tasks at once on a device, and the memory budget
// in each device's execution order from its entry memory.
func checkStarts(p *Problem, starts []int) error {
	if len(starts) != len(p.Tasks) {
		return fmt.Errorf("%d starts for %d tasks", len(starts), len(p.Tasks))
	}
	end := func(i int) int { return starts[i] + p.Tasks[i].Time }
	for i, t := range p.Tasks {
		if starts[i] < t.Release {
			return fmt.Errorf("task %d starts at %d before its release %d", i, starts[i], t.Release)
		}
	}
	for _, pr := range p.Precs {
		if pr.Periods == 0 && end(pr.From) > starts[pr.To]+pr.Lag {
			return fmt.Errorf("precedence %v broken", pr)
		}
	}
	for _, b := range p.Before {
		if end(b[0]) > starts[b[1]] {
			return fmt.Errorf("order %v broken", b)
		}
	}
	for d := 0; d < p.Devices; d++ {
		var on []int
		for i, t := range p.Tasks {
			if slices.Contains(t.Devices, d) {
				on = append(on, i)
			}
		}
		for x, i := range on {
			for _, j := range on[x+1:] {
				if starts[i] < end(j) && starts[j] < end(i) {
					return fmt.Errorf("tasks %d and %d overlap on device %d", i, j, d)
				}
			}
		}
		slices.SortFunc(on, func(a, b int) int { return starts[a] - starts[b] })
		mem := 0
		if p.Entry != nil {
			mem = p.Entry[d]
		}
		if p.Memory > 0 && mem > p.Memory {
			return fmt.Errorf("device %d: entry memory %d over %d", d, mem, p.Memory)
		}
		for _, i := range on {
			mem += p.Tasks[i].Memory
			if p.Memory > 0 && mem > p.Memory {
				return fmt.Errorf("device %d: memory %d over %d after task %d", d, mem, p.Memory, i)
			}
		}
	}
	return nil
}

// bruteForce returns a schedule of least makespan, or nil when none
// exists, for problems whose precedences have no period and Lag ≤ 0.
//
// Why it is exhaustive: sort any feasible schedule by start time into a
// sequence π. Starting each task, in the order of π, as early as its
// release, its predecessors and the tasks before it in π on its devices
// allow gives starts no later than the schedule's, with the same order on
// every device, hence the same memory. So the least makespan over all
// sequences that respect precedences (and over only those) is the optimum.
func bruteForce(p *Problem) []int {
	n := len(p.Tasks)
	for _, pr := range p.Precs {
		if pr.Periods != 0 || pr.Lag > 0 {
			panic("bruteForce: periodic or positive-lag precedence")
		}
	}
	for d := 0; d < p.Devices; d++ {
		if p.Memory > 0 && p.Entry != nil && p.Entry[d] > p.Memory {
			return nil
		}
	}
	type pred struct{ from, lag int }
	preds := make([][]pred, n)
	for _, pr := range p.Precs {
		preds[pr.To] = append(preds[pr.To], pred{pr.From, pr.Lag})
	}
	for _, b := range p.Before {
		preds[b[1]] = append(preds[b[1]], pred{b[0], 0})
	}
	starts := make([]int, n)
	placed := make([]bool, n)
	free := make([]int, p.Devices)
	mem := make([]int, p.Devices)
	if p.Entry != nil {
		copy(mem, p.Entry)
	}
	// head[i] is the earliest task i can start and tail[i] the least time
	// after its end, along precedences; left[d] is the time of the
	// unplaced tasks on d. The unplaced tasks of d end no earlier than
	// max(free[d], least head) + left[d] + least tail: a bound that prunes
	// most sequences.
	head, tail := make([]int, n), make([]int, n)
	for i, t := range p.Tasks {
		head[i] = t.Release
	}
	for range n {
		for j := range n {
			for _, q := range preds[j] {
				head[j] = max(head[j], head[q.from]+p.Tasks[q.from].Time-q.lag)
				tail[q.from] = max(tail[q.from], tail[j]+p.Tasks[j].Time-q.lag)
			}
		}
	}
	left := make([]int, p.Devices)
	for _, t := range p.Tasks {
		for _, d := range t.Devices {
			left[d] += t.Time
		}
	}
	bound := func(span int) int {
		lb := span // makespans only grow along a sequence
		for d := range free {
			if left[d] == 0 {
				continue
			}
			h, tl := 1<<30, 1<<30
			for i, t := range p.Tasks {
				if !placed[i] && slices.Contains(t.Devices, d) {
					h, tl = min(h, head[i]), min(tl, tail[i])
				}
			}
			lb = max(lb, max(free[d], h)+left[d]+tl)
		}
		return lb
	}
	// A greedy schedule, once checked here, is only an incumbent: the
	// search below still finds anything shorter.
	var best []int
	bestSpan := 0
	if g := Greedy(p); g != nil && checkStarts(p, g) == nil {
		best, bestSpan = g, p.Makespan(g)
	}
	var rec func(k, span int)
	rec = func(k, span int) {
		if best != nil && bound(span) >= bestSpan {
			return
		}
		if k == n {
			best, bestSpan = slices.Clone(starts), span
			return
		}
	next:
		for i, t := range p.Tasks {
			if placed[i] {
				continue
			}
			s := t.Release
			for _, q := range preds[i] {
				if !placed[q.from] {
					continue next
				}
				s = max(s, starts[q.from]+p.Tasks[q.from].Time-q.lag)
			}
			for _, d := range t.Devices {
				s = max(s, free[d])
				if p.Memory > 0 && mem[d]+t.Memory > p.Memory {
					continue next
				}
			}
			oldFree := make([]int, len(t.Devices))
			for x, d := range t.Devices {
				oldFree[x] = free[d]
				free[d] = s + t.Time
				mem[d] += t.Memory
				left[d] -= t.Time
			}
			placed[i], starts[i] = true, s
			rec(k+1, max(span, s+t.Time))
			placed[i] = false
			for x, d := range t.Devices {
				free[d] = oldFree[x]
				mem[d] -= t.Memory
				left[d] += t.Time
			}
		}
	}
	rec(0, 0)
	return best
}

// genOptions shape randomProblem.
type genOptions struct {
	before  bool // add Before pairs (consistent with the precedences)
	lags    bool // some precedences with Lag −1 (an extra delay)
	release bool // some tasks released late
	entry   bool // some devices start with memory
}

// randomProblem: 2–3 devices, 4–7 tasks of time 1–3 and memory −1..1, a
// few on two devices, random precedences forming a DAG, a budget of 0
// (unlimited) to 3, weighted towards budgets that bind.
func randomProblem(r *rand.Rand, g genOptions) *Problem {
	p := &Problem{Devices: 2 + r.IntN(2), Memory: []int{0, 1, 1, 2, 2, 3}[r.IntN(6)]}
	n := 4 + r.IntN(4)
	for i := 0; i < n; i++ {
		t := Task{Name: fmt.Sprintf("t%d", i), Time: 1 + r.IntN(3), Memory: []int{-1, -1, 0, 1, 1}[r.IntN(5)]}
		if r.IntN(5) == 0 {
			perm := r.Perm(p.Devices)
			t.Devices = []int{perm[0], perm[1]}
			sort.Ints(t.Devices)
		} else {
			t.Devices = []int{r.IntN(p.Devices)}
		}
		if g.release && r.IntN(4) == 0 {
			t.Release = 1 + r.IntN(2)
		}
		p.Tasks = append(p.Tasks, t)
	}
	// Edges go forward in a random order of the tasks: a DAG.
	order := r.Perm(n)
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			switch k := r.IntN(10); {
			case k < 2:
				pr := Prec{From: order[a], To: order[b]}
				if g.lags && r.IntN(3) == 0 {
					pr.Lag = -1
				}
				p.Precs = append(p.Precs, pr)
			case k < 3 && g.before:
				p.Before = append(p.Before, [2]int{order[a], order[b]})
			}
		}
	}
	if g.entry && r.IntN(3) == 0 {
		p.Entry = make([]int, p.Devices)
		for d := range p.Entry {
			p.Entry[d] = r.IntN(2)
		}
	}
	return p
}

func problemString(p *Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "D=%d M=%d entry=%v\n", p.Devices, p.Memory, p.Entry)
	for i, t := range p.Tasks {
		fmt.Fprintf(&b, "  %d: dev %v time %d mem %+d release %d\n", i, t.Devices, t.Time, t.Memory, t.Release)
	}
	fmt.Fprintf(&b, "  precs %v before %v", p.Precs, p.Before)
	return b.String()
}

// TestBruteForceSelf checks the brute force on problems small enough to
// solve by hand.
func TestBruteForceSelf(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *Problem
		want int // -1: infeasible
	}{
		{"two tasks one device", &Problem{Devices: 1, Tasks: []Task{{Devices: []int{0}, Time: 2}, {Devices: []int{0}, Time: 3}}}, 5},
		{"two devices in parallel", &Problem{Devices: 2, Tasks: []Task{{Devices: []int{0}, Time: 2}, {Devices: []int{1}, Time: 3}}}, 3},
		{"chain across devices", &Problem{Devices: 2, Tasks: []Task{{Devices: []int{0}, Time: 2}, {Devices: []int{1}, Time: 3}},
			Precs: []Prec{{From: 0, To: 1}}}, 5},
		{"delay", &Problem{Devices: 2, Tasks: []Task{{Devices: []int{0}, Time: 2}, {Devices: []int{1}, Time: 3}},
			Precs: []Prec{{From: 0, To: 1, Lag: -2}}}, 7},
		{"release", &Problem{Devices: 1, Tasks: []Task{{Devices: []int{0}, Time: 1, Release: 4}}}, 5},
		{"group task blocks both", &Problem{Devices: 2, Tasks: []Task{{Devices: []int{0, 1}, Time: 1}, {Devices: []int{0}, Time: 1}, {Devices: []int{1}, Time: 1}}}, 2},
		// Memory 1: the +1 must be freed by the −1 before the other +1.
		{"memory forces an order", &Problem{Devices: 1, Memory: 1, Tasks: []Task{
			{Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: -1}},
			Precs: []Prec{{From: 0, To: 2}, {From: 1, To: 2}}}, -1},
		{"memory feasible", &Problem{Devices: 1, Memory: 1, Tasks: []Task{
			{Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: 1}, {Devices: []int{0}, Time: 1, Memory: -1}},
			Precs: []Prec{{From: 0, To: 2}}}, 3},
		{"entry over budget", &Problem{Devices: 1, Memory: 1, Entry: []int{2}, Tasks: []Task{{Devices: []int{0}, Time: 1, Memory: -1}}}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := bruteForce(c.p)
			if c.want < 0 {
				if got != nil {
					t.Fatalf("found %v for an infeasible problem", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("no schedule, want makespan %d", c.want)
			}
			if err := checkStarts(c.p, got); err != nil {
				t.Fatalf("brute force schedule %v: %v", got, err)
			}
			if m := c.p.Makespan(got); m != c.want {
				t.Fatalf("makespan %d, want %d", m, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := func() *Problem {
		return &Problem{Devices: 2, Tasks: []Task{{Devices: []int{0}, Time: 1}, {Devices: []int{1}, Time: 2}},
			Precs: []Prec{{From: 0, To: 1}}}
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("valid problem: %v", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(p *Problem)
		want   string
	}{
		{"time 0", func(p *Problem) { p.Tasks[0].Time = 0 }, "time 0"},
		{"no device", func(p *Problem) { p.Tasks[1].Devices = nil }, "no device"},
		{"device out of range", func(p *Problem) { p.Tasks[1].Devices = []int{2} }, "device 2"},
		{"negative device", func(p *Problem) { p.Tasks[1].Devices = []int{-1} }, "device -1"},
		{"precedence out of range", func(p *Problem) { p.Precs[0].To = 2 }, "precedence 0 -> 2"},
		{"before out of range", func(p *Problem) { p.Before = [][2]int{{0, 5}} }, "order 0 before 5"},
		{"before itself", func(p *Problem) { p.Before = [][2]int{{1, 1}} }, "order 1 before 1"},
		{"entry length", func(p *Problem) { p.Entry = []int{0} }, "entry memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := ok()
			c.mutate(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, c.want)
			}
			// The search refuses it too.
			if _, err := MinimizeMakespan(context.Background(), p, Options{}); err == nil {
				t.Fatal("MinimizeMakespan accepted an invalid problem")
			}
		})
	}
}

func TestEncodeRejectsCycle(t *testing.T) {
	p := &Problem{Devices: 1, Tasks: []Task{{Devices: []int{0}, Time: 1}, {Devices: []int{0}, Time: 1}},
		Precs: []Prec{{From: 0, To: 1}}, Before: [][2]int{{1, 0}}}
	if _, err := MinimizeMakespan(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "cycle") {
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
		p := randomProblem(r, genOptions{before: k%2 == 0, lags: k%3 == 0, release: k%4 == 0, entry: k%5 == 0})
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
				t.Fatalf("problem %d: LowerBound %d below device %d load %d\n%s", k, lb, d, load, problemString(p))
			}
		}
		for _, tk := range p.Tasks {
			if lb < tk.Release+tk.Time {
				t.Fatalf("problem %d: LowerBound %d below a task's release+time\n%s", k, lb, problemString(p))
			}
		}
		opt := bruteForce(p)
		g := Greedy(p)
		if g != nil {
			greedyFound++
			if err := checkStarts(p, g); err != nil {
				t.Fatalf("problem %d: Greedy %v infeasible: %v\n%s", k, g, err, problemString(p))
			}
			if opt == nil {
				t.Fatalf("problem %d: Greedy found %v, brute force nothing\n%s", k, g, problemString(p))
			}
		}
		if opt == nil {
			continue
		}
		feasible++
		m := p.Makespan(opt)
		if lb > m {
			t.Fatalf("problem %d: LowerBound %d above the optimum %d (%v)\n%s", k, lb, m, opt, problemString(p))
		}
		if lb == m {
			tight++
		}
		if g != nil && p.Makespan(g) < m {
			t.Fatalf("problem %d: Greedy %d beats the brute force %d\n%s", k, p.Makespan(g), m, problemString(p))
		}
		if p.Memory == 0 && g == nil {
			t.Fatalf("problem %d: Greedy stuck without a memory budget\n%s", k, problemString(p))
		}
	}
	t.Logf("%d feasible of 2000, LowerBound tight on %d, Greedy found %d", feasible, tight, greedyFound)
	if feasible < 500 || feasible == 2000 {
		t.Fatalf("generator: %d feasible of 2000; want a mix", feasible)
	}
}

// TestFeasibleAgrees compares Problem.Feasible with checkStarts on optimal
// schedules, their perturbations and random start vectors.
func TestFeasibleAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	yes, no := 0, 0
	for k := 0; k < 300; k++ {
		p := randomProblem(r, genOptions{before: k%2 == 0, lags: k%3 == 0, release: k%4 == 0, entry: k%5 == 0})
		var cands [][]int
		if opt := bruteForce(p); opt != nil {
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
			err := checkStarts(p, c)
			if got := p.Feasible(c); got != (err == nil) {
				t.Fatalf("problem %d: Feasible(%v) = %v, checkStarts says %v\n%s", k, c, got, err, problemString(p))
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
		p := randomProblem(r, genOptions{before: k%2 == 0, entry: k%3 == 0})
		g := Greedy(p)
		if g != nil && k%50 != 0 {
			continue
		}
		want := bruteForce(p) != nil
		if !want && unsat >= 40 {
			continue // enough of those; each takes a solver
		}
		got, err := Satisfiable(context.Background(), p)
		if err != nil {
			t.Fatalf("problem %d: %v", k, err)
		}
		if got != want {
			t.Fatalf("problem %d: Satisfiable = %v, brute force %v\n%s", k, got, want, problemString(p))
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
		p    *Problem
		want bool
	}{
		{&Problem{Devices: 2}, true},
		{&Problem{Devices: 2, Memory: 1, Entry: []int{1, 1}}, true},
		{&Problem{Devices: 2, Memory: 1, Entry: []int{0, 2}}, false},
	} {
		got, err := Satisfiable(context.Background(), c.p)
		if err != nil || got != c.want {
			t.Errorf("Satisfiable(%+v) = %v, %v; want %v", c.p, got, err, c.want)
		}
	}
}

// TestGreedyWaitsForDelay: a task held back by a delayed predecessor
// (Lag < 0) after every device is free must still be started; Greedy
// once gave up here.
func TestGreedyWaitsForDelay(t *testing.T) {
	p := &Problem{Devices: 2, Tasks: []Task{
		{Devices: []int{0, 1}, Time: 3, Memory: -1},
		{Devices: []int{1}, Time: 2},
		{Devices: []int{1}, Time: 1},
		{Devices: []int{0}, Time: 2, Memory: 1},
	}, Precs: []Prec{{From: 1, To: 2, Lag: -1}}}
	g := Greedy(p)
	if g == nil {
		t.Fatal("Greedy found nothing")
	}
	if err := checkStarts(p, g); err != nil {
		t.Fatalf("Greedy %v: %v", g, err)
	}
}
