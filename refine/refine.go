// Package refine shortens a full schedule with the solver by
// large-neighbourhood search: it frees the instances at one end of the
// schedule — the last ones (the cooldown) or the first ones (the warmup) —
// keeps every other instance where it is, and asks the solver for the
// least makespan of the freed ones under the memory budget, starting from
// their current times. The head is re-optimised through time reversal:
// run backwards, a schedule's first instances are its last, dependencies
// point the other way and memory is released where it was taken.
//
// Every schedule Improve returns has passed verify.Schedule and ends no
// later than the one it was given. Improve does not search repetends; it
// polishes what package search assembled or a construction built.
package refine

import (
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
	"github.com/tessel-pp/tessel/z3"
)

// Options configure Improve.
type Options struct {
	// Windows are the numbers of instances freed at each end, tried in
	// turn; nil means DefaultWindows.
	Windows []int
	// Effort caps every solver call (smt.Options.Effort); 0 means
	// DefaultEffort. The cap keeps each step bounded and deterministic.
	Effort int
	Seed   int
	// Progress, when set, is called with the makespan after every step
	// that shortens it.
	Progress func(makespan int)
}

// DefaultWindows are the window sizes Improve tries by default (a new
// slice each call): they free about as many instances as the solver settles in a
// second or two on this project's reference machine, then more.
func DefaultWindows() []int { return []int{48, 96, 160} }

// DefaultEffort caps each solver call of a step.
const DefaultEffort = 300_000

// Stats count the work of Improve.
type Stats struct {
	Steps    int // windows given to the solver
	Improved int // steps that shortened the schedule
	Checks   int // solver calls
	// Next is where LNS would have given the solver its next window: how
	// many instances before the end of the schedule the window ends
	// (LNSOptions.Resume).
	Next int
}

// take counts a step of Improve or LNS in st (one window, checks solver
// calls) and keeps its answer next in *cur when it is shorter, telling
// progress (when set) of the new makespan; gain says it did. stop says
// the search ends: with err when the step failed, without when ctx ended
// or the solver was interrupted (*cur stands).
func (st *Stats) take(ctx context.Context, cur **schedule.Schedule, next *schedule.Schedule, checks int, err error, progress func(int)) (gain, stop bool, _ error) {
	st.Steps++
	st.Checks += checks
	if err != nil {
		if errors.Is(err, z3.ErrInterrupted) || ctx.Err() != nil {
			return false, true, nil
		}
		return false, true, err
	}
	if next != nil && schedule.Makespan(next) < schedule.Makespan(*cur) {
		*cur = next
		st.Improved++
		if progress != nil {
			progress(schedule.Makespan(next))
		}
		return true, false, nil
	}
	return false, false, nil
}

// Improve returns a schedule of s's micro-batches that ends no later than
// s, found by re-optimising its ends until no window shortens it, the
// makespan meets the lower bound, or ctx ends. s must be valid.
func Improve(ctx context.Context, s *schedule.Schedule, opt Options) (*schedule.Schedule, Stats, error) {
	var st Stats
	if err := verify.Schedule(s); err != nil {
		return nil, st, fmt.Errorf("refine: the schedule to improve is invalid: %w", err)
	}
	if len(s.Decisions) > 0 {
		// A schedule that offloads or recomputes is left as it is: the
		// windows' encoding keeps every activation.
		return s, st, nil
	}
	windows := opt.Windows
	if windows == nil {
		windows = DefaultWindows()
	}
	if opt.Effort == 0 {
		opt.Effort = DefaultEffort
	}
	lb := rules.LowerBounds(spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches, Memory: s.Memory}).Makespan
	cur := s
	for _, w := range windows {
		stale := 0 // ends tried in a row without a gain
		for end := 0; stale < 2; end = 1 - end {
			if ctx.Err() != nil || schedule.Makespan(cur) <= lb {
				return cur, st, nil
			}
			next, checks, err := step(ctx, cur, w, end == 1, opt)
			gain, stop, err := st.take(ctx, &cur, next, checks, err, opt.Progress)
			if stop {
				if err != nil {
					return nil, st, err
				}
				return cur, st, nil
			}
			if gain {
				stale = 0
				continue
			}
			stale++
		}
		if w >= len(s.Instances) {
			break
		}
	}
	return cur, st, nil
}

// solveWindow asks the solver for a schedule of the window pr shorter
// than hint, the current schedule's starts there (which must fit it). It
// returns the solution, or nil with the checks made when the solver found
// nothing shorter (a call out of effort included), or nil and an error.
func solveWindow(ctx context.Context, p *placement.Placement, pr *smt.Problem, hint []int, seed, effort int) (*smt.Solution, int, error) {
	if !pr.Feasible(hint) {
		return nil, 0, fmt.Errorf("refine: placement %q: the current schedule does not fit its own window (a bug)", p.Name)
	}
	sol, err := smt.MinimizeMakespan(ctx, pr, smt.Options{Seed: seed, Effort: effort, Hint: hint})
	if err != nil && !errors.Is(err, z3.ErrEffort) {
		return nil, 0, err
	}
	if sol == nil || sol.Makespan >= pr.Makespan(hint) {
		checks := 0
		if sol != nil {
			checks = sol.Checks
		}
		return nil, checks, nil
	}
	return sol, sol.Checks, nil
}

// placeEnd is s with the freed instances at the solver's starts (a head
// window's mapped back from reversed time), shifted to start at 0.
func placeEnd(s *schedule.Schedule, free, starts []int, head bool) *schedule.Schedule {
	p, H := s.Placement, schedule.Makespan(s)
	out := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: s.MicroBatches, Memory: s.Memory}}
	out.Instances = append([]schedule.Instance(nil), s.Instances...)
	for k, x := range free {
		t := starts[k]
		if head {
			t = H - t - p.Blocks[out.Instances[x].Block].Time
		}
		out.Instances[x].Start = t
	}
	lo := out.Instances[0].Start
	for _, in := range out.Instances {
		lo = min(lo, in.Start)
	}
	for x := range out.Instances {
		out.Instances[x].Start -= lo
	}
	return out
}

// step frees the last w instances of s (the first w when head is set),
// solves for them and returns the compacted, verified result, or nil
// when the solver found nothing shorter.
func step(ctx context.Context, s *schedule.Schedule, w int, head bool, opt Options) (*schedule.Schedule, int, error) {
	p := s.Placement
	// The window's problem (encode.EndWindow). Backwards the links are
	// left out: the compaction below applies them, and a step that does
	// not end earlier is dropped.
	free, pr, hint := encode.EndWindow(s, w, head)
	sol, checks, err := solveWindow(ctx, p, pr, hint, opt.Seed, opt.Effort)
	if sol == nil {
		return nil, checks, err
	}
	out := placeEnd(s, free, sol.Starts, head)
	cs, err := compact.Compact(spec.New(p, out.MicroBatches), compact.Keep{Orders: schedule.Orders(out)})
	if err != nil {
		return nil, sol.Checks, fmt.Errorf("refine: %w", err)
	}
	ins := cs.Instances
	out.Instances = ins
	if err := verify.Schedule(out); err != nil {
		return nil, sol.Checks, fmt.Errorf("refine: placement %q: improved schedule fails verification (a bug): %w", p.Name, err)
	}
	return out, sol.Checks, nil
}
