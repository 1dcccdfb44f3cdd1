// Package search finds the schedule of N micro-batches with the least
// makespan under a memory budget: constructions and baselines first (the
// incumbent it never loses to), then the Tessel search (Lin et al., "Tessel:
// Boosting Distributed Execution of Large DNN Models via Flexible Schedule
// Search", HPCA 2024): a repetend from the solver, its time-optimal warmup
// and cooldown (the paper's §IV-C and §V: the warmup set {B_i^n : n < n_i}
// before the first iteration, N − N_R + 1 iterations, the cooldown set
// {B_i^n : n > n_i + N − N_R} after the last, checked lazily for every
// improving repetend), assembly and verification, and refinement of the
// ends. Run is the search; Optimal the time-optimal search of all N;
// Replan a search on a changed cluster, warm-started from an old
// schedule; SteadyRepetend the least-period repetend whose bubble rate a
// schedule reaches as N grows.
package search

import (
	"context"
	"fmt"
	"sort"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// Warmup is the set of instances that run before the first iteration
// (eq. 5): B_i^n for n < n_i.
func Warmup(p *placement.Placement, offsets []int) []schedule.Ref {
	var refs []schedule.Ref
	for n := 0; n < maxOf(offsets); n++ {
		for i := range p.Blocks {
			if n < offsets[i] {
				refs = append(refs, schedule.Ref{Block: i, Micro: n})
			}
		}
	}
	return refs
}

// Cooldown is the set of instances that run after the last iteration for
// N micro-batches (eq. 6): B_i^n for n_i + N − N_R < n < N.
func Cooldown(p *placement.Placement, offsets []int, nr, n int) []schedule.Ref {
	var refs []schedule.Ref
	for m := max(0, n-nr+1); m < n; m++ {
		for i := range p.Blocks {
			if m > offsets[i]+n-nr {
				refs = append(refs, schedule.Ref{Block: i, Micro: m})
			}
		}
	}
	return refs
}

// cooldownEntry is the memory of every device when the cooldown starts:
// every instance outside the cooldown has run.
func cooldownEntry(p *placement.Placement, offsets []int, nr, n int) []int {
	entry := make([]int, p.Devices)
	for i, b := range p.Blocks {
		count := min(n, offsets[i]+n-nr+1)
		for _, d := range b.Devices {
			entry[d] += count * b.Memory
		}
	}
	return entry
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// Feasible is the lazy check of the paper's §V: do the warmup and the
// cooldown of candidate c's offsets, for sp's micro-batches (at least
// N_R), have any schedule on sp's placement under sp's memory budget? A
// greedy schedule answers most cases; the solver settles the rest. The
// cooldown depends on the micro-batch count only where a micro-batch
// leaves memory behind on a device.
func Feasible(ctx context.Context, sp spec.Spec, c repetend.Assignment) (bool, error) {
	p, nr, offsets := sp.Placement, c.NR, c.Offsets
	n := max(sp.MicroBatches, nr)
	for _, pr := range []*smt.Problem{
		encode.InstanceProblem(sp, Warmup(p, offsets), nil),
		encode.InstanceProblem(sp, Cooldown(p, offsets, nr, n), cooldownEntry(p, offsets, nr, n)),
	} {
		ok, err := smt.Satisfiable(ctx, pr)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// Parts are what Assemble puts together: a repetend, the instances of its
// warmup and cooldown (Warmup, Cooldown) with a schedule of each (their
// starts, in the same order).
type Parts struct {
	Repetend                     *repetend.Repetend
	Warmup, Cooldown             []schedule.Ref
	WarmupStarts, CooldownStarts []int
}

// Assemble builds the schedule of sp's N ≥ N_R micro-batches of sp's
// placement, under sp's memory budget, from a repetend and schedules of
// its warmup and cooldown (time-optimal ones in the
// search): the iterations keep their exact period; the warmup runs as
// late as its orders allow before them and the cooldown as early as its
// orders allow after them. The result is verified before it is returned
// (with channels, re-timed first where transfers queue: see onLinks).
func Assemble(sp spec.Spec, parts Parts) (*schedule.Schedule, error) {
	p, r, n, memory := sp.Placement, parts.Repetend, sp.MicroBatches, sp.Memory
	warm, cool, warmStarts, coolStarts := parts.Warmup, parts.Cooldown, parts.WarmupStarts, parts.CooldownStarts
	if n < r.NR {
		return nil, fmt.Errorf("search: %d micro-batches is fewer than the repetend's %d", n, r.NR)
	}
	iters := n - r.NR + 1
	start := map[schedule.Ref]int{}
	for k := 0; k < iters; k++ {
		for i := range p.Blocks {
			start[schedule.Ref{Block: i, Micro: r.Offsets[i] + k}] = r.Starts[i] + k*r.Period
		}
	}
	preds, succs := p.PredDeps(), p.SuccDeps()

	// Warmup, as late as possible: visit in decreasing start order of its
	// own schedule (a topological order of its constraints, reversed).
	wi := order(warm, warmStarts, false)
	next := make([]int, p.Devices) // earliest start of what follows on each device
	for d := range next {
		next[d] = 1 << 60
		for i := range p.Blocks {
			if p.OnDevice(i, d) {
				next[d] = min(next[d], r.Starts[i])
			}
		}
	}
	for _, x := range wi {
		ref := warm[x]
		b := p.Blocks[ref.Block]
		s := 1 << 60 // the latest start its devices and successors allow
		for _, d := range b.Devices {
			s = min(s, next[d]-b.Time)
		}
		for _, dep := range succs[ref.Block] {
			if sj, ok := start[schedule.Ref{Block: dep.To, Micro: ref.Micro}]; ok {
				s = min(s, sj-p.Delay(dep))
			}
		}
		start[ref] = s
		for _, d := range b.Devices {
			next[d] = s
		}
	}
	// Cooldown, as early as possible after the last iteration.
	ci := order(cool, coolStarts, true)
	free := make([]int, p.Devices)
	for d := range free {
		free[d] = -1 << 60
	}
	for i, b := range p.Blocks {
		end := r.Starts[i] + (iters-1)*r.Period + b.Time
		for _, d := range b.Devices {
			free[d] = max(free[d], end)
		}
	}
	for _, x := range ci {
		ref := cool[x]
		b := p.Blocks[ref.Block]
		early := -1 << 60
		for _, d := range b.Devices {
			early = max(early, free[d])
		}
		for _, dep := range preds[ref.Block] {
			if s, ok := start[schedule.Ref{Block: dep.From, Micro: ref.Micro}]; ok {
				early = max(early, s+p.Delay(dep))
			}
		}
		start[ref] = early
		for _, d := range b.Devices {
			free[d] = early + b.Time
		}
	}
	lo := 1 << 60
	for _, s := range start {
		lo = min(lo, s)
	}
	sch := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}}
	for ref, s := range start {
		sch.Instances = append(sch.Instances, schedule.Instance{Block: ref.Block, Micro: ref.Micro, Start: s - lo})
	}
	sch.Sort()
	first := 1 << 60
	for _, s := range r.Starts {
		first = min(first, s)
	}
	sch.Repetend = &schedule.Repetend{NR: r.NR, Period: r.Period, Offsets: append([]int(nil), r.Offsets...), Start: first - lo, Iterations: iters}
	// With channels the repetend and the phases were solved apart, and
	// their transfers may queue on a link where they meet: onLinks
	// re-times the schedule then.
	out, _, err := onLinks(sch)
	if err != nil {
		return nil, fmt.Errorf("search: assembled schedule: %w", err)
	}
	return out, nil
}

// order returns the indices of refs sorted by start (ascending or
// descending), ties by block then micro-batch, so that the walk is
// deterministic.
func order(refs []schedule.Ref, starts []int, asc bool) []int {
	idx := make([]int, len(refs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := idx[a], idx[b]
		if starts[x] != starts[y] {
			if asc {
				return starts[x] < starts[y]
			}
			return starts[x] > starts[y]
		}
		if refs[x].Block != refs[y].Block {
			return (refs[x].Block < refs[y].Block) == asc
		}
		return (refs[x].Micro < refs[y].Micro) == asc
	})
	return idx
}
