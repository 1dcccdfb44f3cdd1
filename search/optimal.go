package search

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
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
// so never worse than Run's constructions. A schedule whose makespan
// meets the proven lower bound needs no solver at all.
func Optimal(ctx context.Context, p *placement.Placement, n, memory int, opt smt.Options) (*OptimalResult, error) {
	return OptimalWith(ctx, p, OptimalOptions{MicroBatches: n, Memory: memory, Solver: opt})
}

// OptimalOptions configure OptimalWith.
type OptimalOptions struct {
	MicroBatches int
	Memory       int
	// Offload and Recompute let the constructions that seed the solver
	// offload or recompute activations (Options.Offload). The solver's
	// encoding keeps every activation: where a seed with decisions ends
	// first it stands, and the result is proven only at the lower bound.
	Offload, Recompute bool
	Solver             smt.Options
}

// OptimalWith is Optimal with options.
func OptimalWith(ctx context.Context, p *placement.Placement, o OptimalOptions) (*OptimalResult, error) {
	n, memory, opt := o.MicroBatches, o.Memory, o.Solver
	if err := (Options{Offload: o.Offload, Recompute: o.Recompute}).checkDecisions(p); err != nil {
		return nil, err
	}
	decisions := o.Offload || o.Recompute
	var seed *schedule.Schedule
	source := ""
	offer := func(name string, s *schedule.Schedule) {
		if seed == nil || schedule.Makespan(s) < schedule.Makespan(seed) {
			seed, source = s, name
		}
	}
	if cands, err := construct.PortfolioWith(ctx, p, construct.PortfolioOptions{MicroBatches: n, Memory: memory, Offload: o.Offload, Recompute: o.Recompute}); err == nil && len(cands) > 0 {
		offer(cands[0].Name, cands[0].Schedule)
	}
	for _, m := range baseline.Methods() {
		if s, err := m.Build(p, n, memory); err == nil && allows(s, o.Offload, o.Recompute) {
			offer("baseline "+m.Name, s)
		}
	}
	if decisions && !p.Channels {
		return optimalDecisions(ctx, p, o, seed, source)
	}
	refs := smt.AllInstances(p, n)
	if seed != nil && len(seed.Decisions) == 0 {
		opt.Hint = startsOf(seed, refs)
	}
	s, sol, err := smt.Optimal(ctx, p, n, memory, opt)
	if err != nil {
		if seed == nil {
			return nil, err
		}
		if decisions {
			opt.Hint = startsOf(seed, refs)
		}
		// The solver found nothing before it stopped: the seed stands.
		sol = &smt.Solution{Starts: opt.Hint, Makespan: schedule.Makespan(seed), LowerBound: schedule.LowerBounds(p, n, memory).Makespan}
		sol.Proven = sol.Makespan <= sol.LowerBound
		return &OptimalResult{Schedule: seed, Solution: sol, Source: source}, nil
	}
	s, retimed, err := onLinks(s)
	if err != nil {
		return nil, fmt.Errorf("time-optimal schedule: %w", err)
	}
	if retimed {
		sol.Makespan = schedule.Makespan(s)
		sol.Proven = sol.Makespan <= sol.LowerBound
	}
	if decisions {
		// The solver's bound and proof hold among schedules that keep
		// every activation; the placement's bound holds for all.
		sol.LowerBound = min(sol.LowerBound, schedule.LowerBounds(p, n, memory).Makespan)
		sol.Proven = sol.Makespan <= sol.LowerBound
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

// onLinks returns s when it verifies. A schedule from a solver whose
// encoding leaves out the queues on links (placement's Channels) may
// start a consumer before its tensor, queued behind another on a link,
// arrives: it is then re-timed, every device keeping its order, by
// schedule.Compact, which applies the rule (placement's LinkQueue), and
// retimed is true. Anything else that fails the verifier is a bug.
func onLinks(s *schedule.Schedule) (_ *schedule.Schedule, retimed bool, err error) {
	err = schedule.Verify(s)
	if err == nil {
		return s, false, nil
	}
	if !s.Placement.Channels {
		return nil, false, fmt.Errorf("fails verification (a bug): %w", err)
	}
	ins, cerr := schedule.Compact(s.Placement, s.MicroBatches, schedule.Orders(s))
	if cerr != nil {
		return nil, false, fmt.Errorf("re-timed on the links: %w", cerr)
	}
	out := &schedule.Schedule{Placement: s.Placement, MicroBatches: s.MicroBatches, Memory: s.Memory, Instances: ins}
	if err := schedule.Verify(out); err != nil {
		return nil, false, fmt.Errorf("re-timed on the links, fails verification (a bug): %w", err)
	}
	return out, true, nil
}

// optimalDecisions is the time-optimal search whose encoding decides
// offloads and recomputes too (smt.OptimalDecisions), from the best seed.
func optimalDecisions(ctx context.Context, p *placement.Placement, o OptimalOptions, seed *schedule.Schedule, source string) (*OptimalResult, error) {
	s, sol, err := smt.OptimalDecisions(ctx, p, o.MicroBatches, o.Memory, smt.Decisions{Offload: o.Offload, Recompute: o.Recompute}, o.Solver, seed)
	if err != nil {
		if seed == nil {
			return nil, err
		}
		lb := schedule.LowerBounds(p, o.MicroBatches, o.Memory).Makespan
		sol = &smt.Solution{Makespan: schedule.Makespan(seed), LowerBound: lb, Proven: schedule.Makespan(seed) <= lb}
		return &OptimalResult{Schedule: seed, Solution: sol, Source: source}, nil
	}
	if s == seed {
		return &OptimalResult{Schedule: s, Solution: sol, Source: source}, nil
	}
	return &OptimalResult{Schedule: s, Solution: sol, Source: "solver"}, nil
}

// SteadyPeriod is the least period that a construction which offloads or
// recomputes activations (Options.Offload, Options.Recompute) repeats in
// the steady state of n micro-batches under the budget: the period of the
// repetend schedule.FindRepetend names in each candidate that took a
// decision. ok is false when none repeats. The solver's repetends keep
// every activation; this is the steady state the decisions reach.
func SteadyPeriod(ctx context.Context, p *placement.Placement, n, memory int, offload, recompute bool) (period int, ok bool, err error) {
	if err := (Options{Offload: offload, Recompute: recompute}).checkDecisions(p); err != nil {
		return 0, false, err
	}
	cands, err := construct.PortfolioWith(ctx, p, construct.PortfolioOptions{MicroBatches: n, Memory: memory, Offload: offload, Recompute: recompute})
	if err != nil {
		return 0, false, err
	}
	for _, c := range cands {
		if len(c.Schedule.Decisions) == 0 {
			continue
		}
		if rp := schedule.FindRepetend(c.Schedule); rp != nil && (!ok || rp.Period < period) {
			period, ok = rp.Period, true
		}
	}
	return period, ok, nil
}
