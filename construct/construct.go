// Package construct builds pipeline schedules without a solver, in
// milliseconds, for any placement and any number of micro-batches: list
// schedules under a memory budget (List), modulo schedules that repeat one
// micro-batch every period as compilers pipeline loops (Modulo), and a
// portfolio of both (Portfolio). Every schedule it returns has passed
// verify.Schedule.
//
// The search (package search) starts from the best of them and the
// baselines, and lets the solver improve from there: a search never
// returns a schedule worse than its best construction. Nothing here proves
// optimality; rules.LowerBounds says how far a construction may be from
// it.
package construct

import (
	"context"
	"fmt"
	"sort"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// checkArgs rejects inputs no construction can schedule.
func checkArgs(p *placement.Placement, n, memory int) error {
	switch {
	case p == nil:
		return fmt.Errorf("construct: no placement")
	case n < 1:
		return fmt.Errorf("construct: placement %q: %d micro-batches, need at least 1", p.Name, n)
	case n > schedule.MaxMicroBatches:
		return fmt.Errorf("construct: placement %q: %d micro-batches, at most %d", p.Name, n, schedule.MaxMicroBatches)
	case memory < 0:
		return fmt.Errorf("construct: placement %q: negative memory budget %d", p.Name, memory)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("construct: %w", err)
	}
	return limits.CheckInstances(n, len(p.Blocks))
}

// finish turns start times (instance x is block x%K of micro-batch x/K)
// into a schedule, compacts it (earliest starts under its own per-device
// orders: never later, same memory) and verifies it under the budget.
// A repetend, when given, is kept if the compacted schedule still repeats
// exactly, or if compaction gains nothing (the start times as given then
// stay).
func finish(ctx context.Context, p *placement.Placement, n, memory int, starts []int, rp *schedule.Repetend) (*schedule.Schedule, error) {
	k := len(p.Blocks)
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}}
	s.Instances = make([]schedule.Instance, 0, n*k)
	lo := 0
	if len(starts) > 0 {
		lo = starts[0]
		for _, t := range starts {
			lo = min(lo, t)
		}
	}
	for x, t := range starts {
		s.Instances = append(s.Instances, schedule.Instance{Block: x % k, Micro: x / k, Start: t - lo})
	}
	s.Sort()
	if err := ctx.Err(); err != nil {
		return nil, err // each step below takes time in n·K
	}
	given := s.Instances
	cs, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: schedule.Orders(s)})
	if err != nil {
		return nil, fmt.Errorf("construct: placement %q: %w", p.Name, err)
	}
	ins := cs.Instances
	s.Instances = ins
	if rp != nil {
		s.Repetend = rp
		if !Repeats(s) {
			// The unrolled starts repeat by construction; they are kept
			// when compaction gained nothing and they are valid.
			s.Instances = given
			if !Repeats(s) || schedule.Makespan(s) > makespanOf(p, ins) || verify.Schedule(s) != nil {
				s.Instances, s.Repetend = ins, nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("construct: placement %q: schedule fails verification: %w", p.Name, err)
	}
	return s, nil
}

// Repeats reports whether s's instances run its repetend exactly, and
// sets the repetend's Start to its first iteration's.
func Repeats(s *schedule.Schedule) bool {
	rp := s.Repetend
	k := len(s.Placement.Blocks)
	at := make(map[schedule.Ref]int, len(s.Instances))
	for _, in := range s.Instances {
		at[in.Ref()] = in.Start
	}
	first := -1
	for i := range k {
		base, ok := at[schedule.Ref{Block: i, Micro: rp.Offsets[i]}]
		if !ok {
			return false
		}
		if first < 0 || base < first {
			first = base
		}
		for it := 1; it < rp.Iterations; it++ {
			if at[schedule.Ref{Block: i, Micro: rp.Offsets[i] + it}] != base+it*rp.Period {
				return false
			}
		}
	}
	rp.Start = first
	return true
}

// sortedCopy returns xs sorted, leaving xs alone.
func sortedCopy(xs []int) []int {
	out := append([]int(nil), xs...)
	sort.Ints(out)
	return out
}

// makespanOf is the latest end of the instances.
func makespanOf(p *placement.Placement, ins []schedule.Instance) int {
	ms := 0
	for _, in := range ins {
		ms = max(ms, in.Start+p.Blocks[in.Block].Time)
	}
	return ms
}
