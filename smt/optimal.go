package smt

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/tessel-pp/tessel/z3"
)

// Solution is a schedule of a Problem's tasks.
type Solution struct {
	Starts     []int
	Makespan   int
	LowerBound int  // proven: no schedule finishes earlier
	Proven     bool // Makespan == the optimum
	Checks     int  // solver calls made
	// Bound says what proves LowerBound: one of the relaxations of
	// Problem.LowerBoundBy, or BoundSolver where solver calls refuted
	// every makespan below it; Relaxed is the relaxations' bound alone
	// (≤ LowerBound).
	Bound   Bound
	Relaxed int
	// TransferStarts, with Problem.FreeLinkOrder, is when every transfer
	// starts (Problem.Transfers' order); nil otherwise.
	TransferStarts []int
}

// Bound names what proves a makespan lower bound.
type Bound int

const (
	// BoundPath: the longest path through releases and precedences.
	BoundPath Bound = iota
	// BoundDevice: a device's preemptive one-machine relaxation (its
	// tasks alone, each released at its head and followed by its tail).
	BoundDevice
	// BoundLink: the same relaxation of a link's transfers.
	BoundLink
	// BoundBarriers: the relaxation with the blocks on all devices shrunk
	// to nothing, plus their time.
	BoundBarriers
	// BoundSolver: solver calls found no schedule ending earlier.
	BoundSolver
)

// String says what the bound is, for people.
func (b Bound) String() string {
	switch b {
	case BoundPath:
		return "the critical path"
	case BoundDevice:
		return "a device's preemptive one-machine relaxation"
	case BoundLink:
		return "a link's preemptive one-machine relaxation"
	case BoundBarriers:
		return "the relaxation with blocks on all devices as barriers"
	case BoundSolver:
		return "solver calls that found no shorter schedule"
	}
	return fmt.Sprintf("Bound(%d)", int(b))
}

// Options tune a search.
type Options struct {
	Seed int
	// Effort caps each solver call (see SolverOptions.Effort); when a call
	// runs out, the search stops with the best schedule so far, not proven.
	Effort int
	// Hint is a feasible start time for every task (for instance a
	// baseline schedule); the search starts from the better of it and its
	// own greedy schedule. It is checked, never trusted.
	Hint []int
	// LoadCuts adds the encoder's redundant load cuts (Encoder.LoadCuts).
	// They turn the whole time-optimal problem of m- and nn-shape from
	// minutes into seconds, but slow every solver step: a call capped by
	// Effort that would run out of it anyway (a large-neighbourhood
	// window) takes twice as long with them.
	LoadCuts bool
	// Progress, when set, is called after every solver call with the
	// current bounds.
	Progress func(lower, upper int)
}

// ErrInfeasible means no schedule satisfies the problem.
var ErrInfeasible = errors.New("no schedule satisfies the constraints")

// MinimizeMakespan finds a schedule of least makespan by binary search
// between a proven lower bound and the makespan of a feasible schedule,
// one incremental check per probe. When ctx ends first it returns the best
// schedule found with Proven false (and an error only if none was found).
func MinimizeMakespan(ctx context.Context, p *Problem, opt Options) (*Solution, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sol := &Solution{}
	sol.LowerBound, sol.Bound = p.LowerBoundBy()
	sol.Relaxed = sol.LowerBound
	var best []int
	for _, cand := range append(GreedyAll(p), opt.Hint) {
		if cand != nil && p.Feasible(cand) && (best == nil || p.Makespan(cand) < p.Makespan(best)) {
			best = cand
		}
	}
	// bestX: the transfers' starts of best, with FreeLinkOrder (the
	// producers' order for a list schedule or the hint).
	var bestX []int
	if p.FreeLinkOrder && best != nil {
		bestX = p.fifoTransferStarts(best)
	}
	if best != nil && p.Makespan(best) <= sol.LowerBound {
		// A list schedule meets the lower bound: no solver needed.
		sol.Starts, sol.Makespan, sol.Proven, sol.TransferStarts = best, p.Makespan(best), true, bestX
		return sol, nil
	}
	x, s, err := z3.NewSolving(z3.SolverOptions{Seed: opt.Seed, Effort: opt.Effort})
	if err != nil {
		return nil, err
	}
	defer x.Close()
	e, err := Encode(x, s, p, nil)
	if err != nil {
		return nil, err
	}
	if opt.LoadCuts {
		e.LoadCuts()
	}
	probe := func(bound int) (z3.Status, error) {
		return ProbeMakespan(ctx, s, &sol.Checks, bound, e.BoundMakespan, func(m *z3.Model) error {
			starts, err := e.Starts(m)
			if err != nil {
				return err
			}
			var xs []int
			if p.FreeLinkOrder {
				if xs, err = e.TransferStarts(m); err != nil {
					return err
				}
				if !p.FeasibleTransfers(starts, xs) {
					return errors.New("smt: solver model violates the problem (encoder bug)")
				}
			} else if !p.Feasible(starts) {
				return errors.New("smt: solver model violates the problem (encoder bug)")
			}
			if best == nil || p.Makespan(starts) < p.Makespan(best) {
				best, bestX = starts, xs
			}
			return nil
		})
	}
	if best == nil {
		st, err := probe(-1)
		switch {
		case err != nil:
			return nil, err
		case st == z3.Unsat:
			return nil, ErrInfeasible
		}
	}
	// lo is proven (every bound below it was refuted); BisectMakespan also
	// skips bounds whose check ran out of effort, which proves nothing.
	lo, hi, err := BisectMakespan(sol.LowerBound, p.Makespan(best), opt.Progress, probe, func() int { return p.Makespan(best) })
	if err != nil {
		return nil, err
	}
	sol.Starts = best
	sol.TransferStarts = bestX
	sol.Makespan = p.Makespan(best)
	if lo > sol.LowerBound {
		sol.LowerBound, sol.Bound = lo, BoundSolver
	}
	sol.Proven = lo >= hi
	return sol, nil
}

// Feasible checks starts against every constraint of the problem except
// periodic precedences, the transfers on their links included
// (transferEnds). It is the encoder's own sanity check; the
// independent verifier lives in package schedule.
func (p *Problem) Feasible(starts []int) bool {
	return p.feasible(starts, nil)
}

// FeasibleTransfers is Feasible with the transfers at the given starts xs
// (in any order on a link, as Problem.FreeLinkOrder allows) instead of
// the producers' order.
func (p *Problem) FeasibleTransfers(starts, xs []int) bool {
	return p.feasible(starts, xs) && p.transfersFit(starts, xs)
}

// feasible is Feasible, with the transfers checked by the producers'
// order when xs is nil, and left to the caller otherwise.
func (p *Problem) feasible(starts, xs []int) bool {
	if len(starts) != len(p.Tasks) {
		return false
	}
	for i, t := range p.Tasks {
		if starts[i] < t.Release {
			return false
		}
	}
	for _, pr := range p.Precs {
		if pr.Periods == 0 && starts[pr.From]+p.Tasks[pr.From].Time > starts[pr.To]+pr.Lag {
			return false
		}
	}
	for _, b := range p.Before {
		if starts[b[0]]+p.Tasks[b[0]].Time > starts[b[1]] {
			return false
		}
	}
	if !p.meetsDeadlines(starts) {
		return false
	}
	for k, end := range p.transferEnds(starts) {
		if xs == nil && end > starts[p.Transfers[k].To] {
			return false
		}
	}
	for d := 0; d < p.Devices; d++ {
		var on []int
		for i := range p.Tasks {
			if p.Tasks[i].On(d) {
				on = append(on, i)
			}
		}
		sort.Slice(on, func(a, b int) bool { return starts[on[a]] < starts[on[b]] })
		mem := p.entry(d)
		if p.Memory > 0 && mem > p.Memory {
			return false
		}
		for k, i := range on {
			if k > 0 && starts[on[k-1]]+p.Tasks[on[k-1]].Time > starts[i] {
				return false
			}
			mem += p.Tasks[i].Memory
			if p.Memory > 0 && mem > p.Memory {
				return false
			}
		}
	}
	return true
}

// Greedy is a memory-aware list schedule: at every moment it starts, among
// the tasks whose predecessors have ended and whose devices are free, the
// one that frees memory first, then the one with the longest tail, then
// the lowest index, as long as it fits the budget. It returns nil when it
// gets stuck (memory full and nothing running that frees it) or when the
// problem has periodic precedences. Transfers are booked on their links
// as their producers start, which is the rule's order, since the list
// schedule starts tasks in time order (and two producers of one link
// share a device, so never start together); a consumer waits for them.
func Greedy(p *Problem) []int { return greedy(p, byMemoryThenTail) }

// Priority rules of the list schedules: the search starts from the best.
const (
	byMemoryThenTail = iota // free memory first, then the longest tail
	byTail                  // the longest tail first
	byIndex                 // the problem's order (micro-batch major)
	numRules
)

// GreedyAll is the list schedule of every priority rule that finds one: the
// schedules the makespan search starts from.
func GreedyAll(p *Problem) [][]int {
	var out [][]int
	for rule := 0; rule < numRules; rule++ {
		if g := greedy(p, rule); g != nil {
			out = append(out, g)
		}
	}
	return out
}

func greedy(p *Problem, rule int) []int {
	n := len(p.Tasks)
	for _, pr := range p.Precs {
		if pr.Periods != 0 || pr.Lag > 0 {
			return nil
		}
	}
	head, tail := p.headsTails()
	preds := make([][]Prec, n)
	for _, pr := range p.allPrecs() {
		preds[pr.To] = append(preds[pr.To], pr)
	}
	for _, b := range p.Before {
		preds[b[1]] = append(preds[b[1]], Prec{From: b[0], To: b[1]})
	}
	// Transfers (their producers are among preds): the ones out of each
	// task, when the booked ones arrive, and when each link is next free.
	var outs [][]int
	var arrive []int
	var linkFree map[int]int
	if len(p.Transfers) > 0 {
		outs, arrive, linkFree = make([][]int, n), make([]int, n), map[int]int{}
		for k, tr := range p.Transfers {
			outs[tr.From] = append(outs[tr.From], k)
		}
	}
	starts := make([]int, n)
	done := make([]bool, n)
	free := make([]int, p.Devices) // time each device becomes free
	mem := make([]int, p.Devices)
	for d := range mem {
		mem[d] = p.entry(d)
	}
	prio := make([]int, n)
	for i := range prio {
		prio[i] = i
	}
	sort.SliceStable(prio, func(a, b int) bool {
		ta, tb := p.Tasks[prio[a]], p.Tasks[prio[b]]
		switch rule {
		case byIndex:
			return prio[a] < prio[b]
		case byMemoryThenTail:
			if (ta.Memory < 0) != (tb.Memory < 0) {
				return ta.Memory < 0
			}
		}
		return tail[prio[a]] > tail[prio[b]]
	})
	placed := 0
	now := 0
	for placed < n {
		progress := false
		for _, i := range prio {
			if done[i] {
				continue
			}
			t := p.Tasks[i]
			ready := max(now, head[i], t.Release)
			if arrive != nil {
				ready = max(ready, arrive[i])
			}
			ok := ready == now
			for _, pr := range preds[i] {
				if !done[pr.From] || starts[pr.From]+p.Tasks[pr.From].Time-pr.Lag > now {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			for _, d := range t.Devices {
				if free[d] > now || (p.Memory > 0 && mem[d]+t.Memory > p.Memory) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			starts[i] = now
			done[i] = true
			placed++
			progress = true
			for _, d := range t.Devices {
				free[d] = now + t.Time
				mem[d] += t.Memory
			}
			if outs != nil {
				for _, k := range outs[i] {
					tr := p.Transfers[k]
					f, ok := linkFree[tr.Link]
					x := max(now+t.Time, tr.Release)
					if ok {
						x = max(x, f)
					}
					linkFree[tr.Link] = x + tr.Time
					arrive[tr.To] = max(arrive[tr.To], x+tr.Time)
				}
			}
		}
		if placed == n {
			break
		}
		// Advance to the next moment anything can change.
		next := -1
		for d := range free {
			if free[d] > now && (next < 0 || free[d] < next) {
				next = free[d]
			}
		}
		for i := range p.Tasks {
			if done[i] {
				continue
			}
			// A predecessor with a delay (Lag < 0) may hold a task back
			// past every device's free time.
			r := max(head[i], p.Tasks[i].Release)
			if arrive != nil {
				r = max(r, arrive[i])
			}
			for _, pr := range preds[i] {
				if done[pr.From] {
					r = max(r, starts[pr.From]+p.Tasks[pr.From].Time-pr.Lag)
				}
			}
			if r > now && (next < 0 || r < next) {
				next = r
			}
		}
		if next < 0 {
			if !progress {
				return nil
			}
			next = now + 1
		}
		now = next
	}
	if !p.Feasible(starts) {
		return nil
	}
	return starts
}

// Satisfiable reports whether the problem has any schedule: a greedy
// schedule answers yes at once; otherwise the solver decides.
func Satisfiable(ctx context.Context, p *Problem) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, err
	}
	if len(p.Tasks) == 0 {
		for d := 0; d < p.Devices; d++ {
			if p.Memory > 0 && p.entry(d) > p.Memory {
				return false, nil
			}
		}
		return true, nil
	}
	if Greedy(p) != nil {
		return true, nil
	}
	x, s, err := z3.NewSolving(z3.SolverOptions{})
	if err != nil {
		return false, err
	}
	defer x.Close()
	if _, err := Encode(x, s, p, nil); err != nil {
		return false, err
	}
	st, err := s.Check(ctx)
	if err != nil {
		return false, err
	}
	return st == z3.Sat, nil
}
