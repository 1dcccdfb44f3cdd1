package completion

import (
	"context"
	"fmt"

	"tessel/baseline"
	"tessel/construct"
	"tessel/placement"
	"tessel/schedule"
	"tessel/smt"
)

// OptimalResult is the time-optimal search's answer.
type OptimalResult struct {
	Schedule *schedule.Schedule // verified
	Solution *smt.Solution      // the solver's bounds and effort
	// Source is "solver", or the construction or baseline that the
	// solver did not beat in time.
	Source string
}

// Optimal is the time-optimal (TO) search of all n micro-batches (the
// Tessel paper's §III-B), started from the best construction or baseline,
// which the solver must beat: its answer is never worse than theirs, and
// so never worse than Search's constructions. A schedule whose makespan
// meets the proven lower bound needs no solver at all.
func Optimal(ctx context.Context, p *placement.Placement, n, memory int, opt smt.Options) (*OptimalResult, error) {
	var seed *schedule.Schedule
	source := ""
	offer := func(name string, s *schedule.Schedule) {
		if seed == nil || schedule.Makespan(s) < schedule.Makespan(seed) {
			seed, source = s, name
		}
	}
	if cands, err := construct.Portfolio(ctx, p, n, memory); err == nil && len(cands) > 0 {
		offer(cands[0].Name, cands[0].Schedule)
	}
	for _, m := range baseline.Methods() {
		if s, err := m.Build(p, n, memory); err == nil {
			offer("baseline "+m.Name, s)
		}
	}
	refs := smt.AllInstances(p, n)
	if seed != nil {
		opt.Hint = startsOf(seed, refs)
	}
	s, sol, err := smt.Optimal(ctx, p, n, memory, opt)
	if err != nil {
		if seed == nil {
			return nil, err
		}
		// The solver found nothing before it stopped: the seed stands.
		sol = &smt.Solution{Starts: opt.Hint, Makespan: schedule.Makespan(seed), LowerBound: schedule.LowerBounds(p, n, memory).Makespan}
		sol.Proven = sol.Makespan <= sol.LowerBound
		return &OptimalResult{Schedule: seed, Solution: sol, Source: source}, nil
	}
	if err := schedule.Verify(s); err != nil {
		return nil, fmt.Errorf("time-optimal schedule fails verification (a bug): %w", err)
	}
	if seed != nil && schedule.Makespan(seed) < sol.Makespan {
		// The solver's symmetry breaking (property 4.1) may have set the
		// seed aside; it is still the better answer.
		sol.Makespan = schedule.Makespan(seed)
		sol.Proven = sol.Makespan <= sol.LowerBound
		return &OptimalResult{Schedule: seed, Solution: sol, Source: source}, nil
	}
	return &OptimalResult{Schedule: s, Solution: sol, Source: "solver"}, nil
}
