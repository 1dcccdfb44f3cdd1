package search

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/rule/hostchan"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// OptimalOptions are the effort of Optimal; the problem is its spec.Spec
// (every one of its micro-batches in the encoding).
type OptimalOptions struct {
	Seed int // random seed of the solver
	// Effort caps each solver call (smt.Options.Effort; 0: no cap): when
	// one runs out the search stops with the best schedule so far, not
	// proven.
	Effort int
	// Progress, when set, is called after every solver call with the
	// current bounds of the makespan.
	Progress func(lower, upper int)
	// LinkOrder, with channels (rule/links), lets the solver
	// choose the order of the transfers on each link instead of their
	// producers' (She et al., operator-level MIP, §III eqs 14–15;
	// smt.Problem.FreeLinkOrder); the schedule records the order it
	// chose (schedule's LinkOrder). Refused without channels and where
	// device pairs have several links (placement's Lanes).
	LinkOrder bool
}

// OptimalResult is the time-optimal search's answer.
type OptimalResult struct {
	Schedule *schedule.Schedule // verified
	Solution *smt.Solution      // the solver's bounds and effort
	// Source is the solver (SourceSolver), or the construction or
	// baseline that the solver did not beat in time.
	Source Source
	// Bound is the proven lower bound of the makespan and what proves it.
	Bound OptimalBound
}

// OptimalBound is the time-optimal search's lower bound of the makespan:
// the larger of the rules' bounds (rules.LowerBounds)
// and the solver's (its relaxations, raised by every shorter makespan a
// solver call refuted).
type OptimalBound struct {
	Makespan int
	// By says what proves Makespan, for people: a relaxation (which
	// one), the memory budget, or solver calls.
	By string
	// Solver is set when solver calls proved Makespan, above Relaxed,
	// the best bound of the relaxations and the memory budget alone.
	Solver  bool
	Relaxed int
}

// boundOf combines the rules' bounds (rules.LowerBounds) of sp's
// placement, micro-batches and budgets with the solver's.
func boundOf(sp spec.Spec, sol *smt.Solution) OptimalBound {
	b := rules.LowerBounds(spec.Spec{Placement: sp.Placement, MicroBatches: sp.MicroBatches, Memory: sp.Memory, Latency: sp.Latency})
	by := b.By
	out := OptimalBound{Makespan: b.Makespan, By: by.String(), Relaxed: b.Makespan}
	if sol == nil {
		return out
	}
	if sol.Relaxed > out.Relaxed {
		out.Makespan, out.Relaxed, out.By = sol.Relaxed, sol.Relaxed, sol.Bound.String()
	}
	if sol.Bound == smt.BoundSolver && sol.LowerBound > out.Makespan {
		out.Makespan, out.By, out.Solver = sol.LowerBound, sol.Bound.String(), true
	}
	return out
}

// Optimal is the time-optimal (TO) search of all N micro-batches (the
// Tessel paper's §III-B), started from the best construction or baseline,
// which the solver must beat: its answer is never worse than theirs, and
// so never worse than Run's constructions. A schedule whose makespan
// meets the proven lower bound needs no solver at all. The schedule it
// returns has passed the verifier. When ctx ends before the solver found
// anything, the best construction or baseline is the answer, not proven;
// without one, the error is ErrInfeasible where no schedule fits the
// budget, ErrStopped where the search was stopped first (errors.Is).
func Optimal(ctx context.Context, sp spec.Spec, opt OptimalOptions) (*OptimalResult, error) {
	res, err := optimal(ctx, sp, opt)
	return res, own(err)
}

// optimal is Optimal, its errors not yet the search's own.
func optimal(ctx context.Context, sp spec.Spec, opt OptimalOptions) (*OptimalResult, error) {
	p := sp.Placement
	n, memory := sp.MicroBatches, sp.Memory
	if n < 1 {
		return nil, fmt.Errorf("search: %d micro-batches, want at least 1", n)
	}
	if opt.LinkOrder && !links.Queued(p) {
		return nil, fmt.Errorf("search: placement %q: a link order is chosen only where links carry one transfer at a time (channels)", p.Name)
	}
	if opt.LinkOrder && len(p.Lanes) > 0 {
		return nil, fmt.Errorf("search: placement %q: a link order is not chosen where device pairs have several links", p.Name)
	}
	if p.Open() {
		return nil, errOpen(p)
	}
	if err := sp.CheckDecisions(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if err := sp.CheckLatency(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if p.Overlap != nil {
		return nil, fmt.Errorf("search: placement %q: the time-optimal search does not pair forwards and backwards into overlapped actions: run the search (tessel search), which does", p.Name)
	}
	var start *schedule.Schedule
	var source Source
	offer := func(src Source, s *schedule.Schedule) {
		if s = withinLatency(sp, s); s == nil {
			return
		}
		if start == nil || schedule.Makespan(s) < schedule.Makespan(start) {
			start, source = s, src
		}
	}
	if cands, err := portfolio(ctx, sp); err == nil && len(cands) > 0 {
		offer(Source{Kind: SourceConstruction, Name: cands[0].Name}, cands[0].Schedule)
	}
	for _, m := range baseline.All() {
		if s, err := m.Build(spec.Spec{Placement: p, MicroBatches: n, Memory: memory}); err == nil && sp.Allowed.Permit(s.Count()) {
			offer(Source{Kind: SourceBaseline, Name: m.Name}, s)
		}
	}
	sopt := smt.Options{Seed: opt.Seed, Effort: opt.Effort, Progress: opt.Progress}
	if (hostchan.Rule{}).On(sp) && !(links.Rule{}).On(sp) {
		return optimalDecisions(ctx, sp, opt, sopt, start, source)
	}
	refs := encode.AllInstances(sp)
	if start != nil && len(start.Decisions) == 0 {
		sopt.Hint = startsOf(start, refs)
	}
	solve := solveAllWithin
	if opt.LinkOrder {
		solve = solveAllLinkOrder
	}
	s, sol, err := solve(ctx, sp, sopt)
	if err != nil {
		if start == nil {
			return nil, err
		}
		// The solver found nothing before it stopped: the start stands.
		sol = &smt.Solution{Starts: startsOf(start, refs), Makespan: schedule.Makespan(start), LowerBound: boundOf(sp, nil).Makespan}
		sol.Proven = sol.Makespan <= sol.LowerBound
		return &OptimalResult{Schedule: start, Solution: sol, Source: source, Bound: boundOf(sp, nil)}, nil
	}
	if lb := boundOf(sp, nil).Makespan; lb > sol.LowerBound {
		// The latency budget's bound (rules.LowerBounds), which
		// the solver's relaxations do not know.
		sol.LowerBound = lb
		sol.Proven = sol.Proven || sol.Makespan <= lb
	}
	s, retimed, err := onLinks(s)
	if err != nil && sp.Latency > 0 && start != nil {
		// Re-timed on the links, the solver's device orders meet no
		// schedule within the latency budget: the start stands.
		sol.Makespan = schedule.Makespan(start)
		sol.Proven = sol.Makespan <= sol.LowerBound
		return &OptimalResult{Schedule: start, Solution: sol, Source: source, Bound: boundOf(sp, sol)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("time-optimal schedule: %w", err)
	}
	if retimed {
		sol.Makespan = schedule.Makespan(s)
		sol.Proven = sol.Makespan <= sol.LowerBound
	}
	if start != nil && schedule.Makespan(start) < sol.Makespan {
		// The solver's symmetry breaking (property 4.1) may have set the
		// start aside; it is still the better answer.
		sol.Makespan = schedule.Makespan(start)
		sol.Proven = sol.Makespan <= sol.LowerBound
		return &OptimalResult{Schedule: start, Solution: sol, Source: source, Bound: boundOf(sp, sol)}, nil
	}
	return &OptimalResult{Schedule: s, Solution: sol, Source: Source{Kind: SourceSolver}, Bound: boundOf(sp, sol)}, nil
}

// solveAllLinkOrder is solveAllWithin with the order of the transfers on
// each link chosen by the solver (smt.Problem.FreeLinkOrder) and
// recorded in the schedule (LinkOrder). The schedule is not yet verified.
func solveAllLinkOrder(ctx context.Context, sp spec.Spec, opt smt.Options) (*schedule.Schedule, *smt.Solution, error) {
	p, n, memory, latency := sp.Placement, sp.MicroBatches, sp.Memory, sp.Latency
	opt.LoadCuts = true
	refs := encode.AllInstances(sp)
	pr := encode.InstanceProblem(sp, refs, nil)
	pr.FreeLinkOrder = true
	if latency > 0 {
		pr.Deadlines = encode.LatencyDeadlines(sp, refs)
	}
	sol, err := smt.MinimizeMakespan(ctx, pr, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("placement %q, %d micro-batches, memory %d: %w", p.Name, n, memory, err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory, Latency: max(latency, 0)}}
	for k, r := range refs {
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: sol.Starts[k]})
	}
	if len(pr.Transfers) > 0 {
		if s.LinkOrder, err = encode.LinkOrders(p, refs, pr, sol.TransferStarts); err != nil {
			return nil, nil, err
		}
	}
	return s, sol, nil
}

// solveAll encodes every instance of sp's micro-batches and minimises
// the makespan under sp's memory budget, with the load cuts on. With channels its
// transfers are encoded exactly, so the schedule needs no compaction to
// meet the link rule. The schedule is not yet verified.
func solveAll(ctx context.Context, sp spec.Spec, opt smt.Options) (*schedule.Schedule, *smt.Solution, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	opt.LoadCuts = true
	refs := encode.AllInstances(sp)
	sol, err := smt.MinimizeMakespan(ctx, encode.InstanceProblem(sp, refs, nil), opt)
	if err != nil {
		return nil, nil, fmt.Errorf("placement %q, %d micro-batches, memory %d: %w", p.Name, n, memory, err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}}
	for k, r := range refs {
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: sol.Starts[k]})
	}
	return s, sol, nil
}

// onLinks returns s when it verifies. A schedule from a solver whose
// encoding leaves out the queues on links (rule/links) may
// start a consumer before its tensor, queued behind another on a link,
// arrives: it is then re-timed, every device keeping its order, by
// compact.Compact under s's latency budget,
// which applies the rule (placement's LinkQueue), and retimed is true. Anything else that fails the verifier is a bug.
func onLinks(s *schedule.Schedule) (_ *schedule.Schedule, retimed bool, err error) {
	err = verify.Schedule(s)
	if err == nil {
		return s, false, nil
	}
	if !links.Queued(s.Placement) {
		return nil, false, fmt.Errorf("fails verification (a bug): %w", err)
	}
	cs, cerr := compact.Compact(spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches, Latency: s.Latency}, compact.Keep{Orders: schedule.Orders(s)})
	if cerr != nil {
		return nil, false, fmt.Errorf("re-timed on the links: %w", cerr)
	}
	out := &schedule.Schedule{Spec: spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches, Memory: s.Memory, Latency: s.Latency}, Instances: cs.Instances}
	if err := verify.Schedule(out); err != nil {
		return nil, false, fmt.Errorf("re-timed on the links, fails verification (a bug): %w", err)
	}
	return out, true, nil
}

// optimalDecisions is the time-optimal search whose encoding decides
// offloads and recomputes too (encode.OptimalDecisions, under the
// latency budget where there is one), from the best seed.
func optimalDecisions(ctx context.Context, sp spec.Spec, _ OptimalOptions, sopt smt.Options, seed *schedule.Schedule, source Source) (*OptimalResult, error) {
	p := sp.Placement
	s, sol, err := encode.OptimalDecisions(ctx, sp, seed, sopt)
	if err != nil {
		if seed == nil {
			return nil, err
		}
		lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: sp.MicroBatches, Memory: sp.Memory}).Makespan
		if sp.Latency > 0 {
			lb = max(lb, boundOf(sp, nil).Makespan)
		}
		sol = &smt.Solution{Makespan: schedule.Makespan(seed), LowerBound: lb, Proven: schedule.Makespan(seed) <= lb}
		return &OptimalResult{Schedule: seed, Solution: sol, Source: source}, nil
	}
	if lb := boundOf(sp, nil).Makespan; sp.Latency > 0 && lb > sol.LowerBound {
		// The latency budget's bound, which the solver's relaxations do
		// not know.
		sol.LowerBound = lb
		sol.Proven = sol.Proven || sol.Makespan <= lb
	}
	if s == seed {
		return &OptimalResult{Schedule: s, Solution: sol, Source: source}, nil
	}
	return &OptimalResult{Schedule: s, Solution: sol, Source: Source{Kind: SourceSolver}}, nil
}

// SteadyPeriod is the least period that a construction which offloads or
// recomputes activations (the spec's Allowed) repeats in the steady state
// of the spec's micro-batches under its budgets: the period of the
// repetend schedule.FindRepetend names in each candidate that took a
// decision. ok is false when none repeats. The solver's repetends keep
// every activation; this is the steady state the decisions reach. Under a
// latency budget the constructions are re-timed under it with their
// decisions (construct.Portfolio), those whose orders meet none
// left out: every micro-batch of such a schedule meets the budget, and so
// does the steady state it repeats.
func SteadyPeriod(ctx context.Context, sp spec.Spec) (period int, ok bool, err error) {
	if err := sp.CheckDecisions(); err != nil {
		return 0, false, fmt.Errorf("search: %w", err)
	}
	cands, err := portfolio(ctx, sp)
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
