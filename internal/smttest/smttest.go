// Package smttest holds the test oracles of package smt's problems, shared
// by the tests of smt and of encode: an independent check of a schedule, a
// brute-force optimum, random problems and a printable form.
package smttest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/tessel-pp/tessel/smt"
)

// CheckStarts is the tests' own verdict on a schedule of a Problem,
// written apart from Problem.Feasible: releases, precedences without
// period, Before, no two tasks at once on a device, and the memory budget
// in each device's execution order from its entry memory.
func CheckStarts(p *smt.Problem, starts []int) error {
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

// BruteForce returns a schedule of least makespan, or nil when none
// exists, for problems whose precedences have no period and Lag ≤ 0.
//
// Why it is exhaustive: sort any feasible schedule by start time into a
// sequence π. Starting each task, in the order of π, as early as its
// release, its predecessors and the tasks before it in π on its devices
// allow gives starts no later than the schedule's, with the same order on
// every device, hence the same memory. So the least makespan over all
// sequences that respect precedences (and over only those) is the optimum.
func BruteForce(p *smt.Problem) []int {
	n := len(p.Tasks)
	for _, pr := range p.Precs {
		if pr.Periods != 0 || pr.Lag > 0 {
			panic("BruteForce: periodic or positive-lag precedence")
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
	if g := smt.Greedy(p); g != nil && CheckStarts(p, g) == nil {
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

// GenOptions shape RandomProblem.
type GenOptions struct {
	Before  bool // add Before pairs (consistent with the precedences)
	Lags    bool // some precedences with Lag −1 (an extra delay)
	Release bool // some tasks released late
	Entry   bool // some devices start with memory
}

// RandomProblem: 2–3 devices, 4–7 tasks of time 1–3 and memory −1..1, a
// few on two devices, random precedences forming a DAG, a budget of 0
// (unlimited) to 3, weighted towards budgets that bind.
func RandomProblem(r *rand.Rand, g GenOptions) *smt.Problem {
	p := &smt.Problem{Devices: 2 + r.IntN(2), Memory: []int{0, 1, 1, 2, 2, 3}[r.IntN(6)]}
	n := 4 + r.IntN(4)
	for i := 0; i < n; i++ {
		t := smt.Task{Name: fmt.Sprintf("t%d", i), Time: 1 + r.IntN(3), Memory: []int{-1, -1, 0, 1, 1}[r.IntN(5)]}
		if r.IntN(5) == 0 {
			perm := r.Perm(p.Devices)
			t.Devices = []int{perm[0], perm[1]}
			sort.Ints(t.Devices)
		} else {
			t.Devices = []int{r.IntN(p.Devices)}
		}
		if g.Release && r.IntN(4) == 0 {
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
				pr := smt.Prec{From: order[a], To: order[b]}
				if g.Lags && r.IntN(3) == 0 {
					pr.Lag = -1
				}
				p.Precs = append(p.Precs, pr)
			case k < 3 && g.Before:
				p.Before = append(p.Before, [2]int{order[a], order[b]})
			}
		}
	}
	if g.Entry && r.IntN(3) == 0 {
		p.Entry = make([]int, p.Devices)
		for d := range p.Entry {
			p.Entry[d] = r.IntN(2)
		}
	}
	return p
}

func String(p *smt.Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "D=%d M=%d entry=%v\n", p.Devices, p.Memory, p.Entry)
	for i, t := range p.Tasks {
		fmt.Fprintf(&b, "  %d: dev %v time %d mem %+d release %d\n", i, t.Devices, t.Time, t.Memory, t.Release)
	}
	fmt.Fprintf(&b, "  precs %v before %v", p.Precs, p.Before)
	return b.String()
}
