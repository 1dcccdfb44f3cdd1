package search

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// The search under a latency budget (Options.Latency; placement's
// "Latency"), layer by layer:
//
//   - constructions: the portfolio's schedules re-timed under the budget
//     (construct.WithLatency: their device orders, each micro-batch's first
//     blocks delayed as far as it needs) and the latency list schedule
//     (construct.LatencyList); baselines and starts are re-timed the same
//     way, and those whose orders meet no schedule within the budget are
//     left out;
//   - the repetend: its cross-iteration latency rule in the solver's
//     encoding (repetend.Options.Latency), so that the period is the least
//     whose steady state meets the budget; a modulo schedule's repetend is
//     the incumbent only where its steady state meets it;
//   - the warmup and cooldown: the rule among their own micro-batches in
//     the time-optimal encoding (encode.LatencyDeadlines), and the assembled
//     schedule re-timed under the budget (the micro-batches that cross
//     into the iterations);
//   - the time-optimal search of all N (Optimal, and Run with N < N_R):
//     the rule for every micro-batch in the encoding;
//   - with N·K at most the phases' limit, the time-optimal search of all N
//     under the rule (step 3b of Run, latencyOptimal), from the best
//     schedule so far and within the phase effort: it proves the result
//     where it runs to its end;
//   - refinement: the windows at the ends re-timed under the budget, kept
//     only where they then still end earlier; the large-neighbourhood
//     windows hold the rule in their encoding for every micro-batch they
//     touch (encode's window_latency.go) and are re-timed under it;
//   - bounds: a budget below the critical path is an error (no schedule
//     meets it); the makespan's bound is raised by the budget's bound
//     (rules.LowerBounds), which Result.BoundBy names.
//
// With links that carry one transfer at a time (rule/links)
// every re-timing and the latency list schedule time the transfers by the
// links' queues (compact.Compact, construct.LatencyList), and the
// solver's encodings have the queues; a solver's schedule re-timed on the
// links keeps the budget (onLinks). With offload or recompute, every
// schedule that decides (the constructions, PipeOffload, AdaOffload, 1F1B
// with recompute, the windows that decide) is re-timed under the budget
// with its decisions (compact.Compact) or left out, the
// time-optimal search that decides holds the rule
// (encode.OptimalDecisions), and where nothing meets both budgets the
// error is one line (noneWithin, ErrLatency).
//
// Every schedule the search returns records the budget (schedule's
// Latency), which the verifier checks.

// ErrLatency wraps the error of a latency budget no schedule meets
// (spec.ErrLatency).
var ErrLatency = spec.ErrLatency

// noneWithin is the error of a search with offload or recompute under a
// latency budget that found no schedule meeting both budgets: every
// construction and baseline, re-timed under the latency budget with its
// decisions, was over one of them, and so was the repetend's schedule
// (which keeps every activation) or there was none.
func noneWithin(sp spec.Spec) error {
	what := "offload or recompute"
	switch {
	case !sp.Allowed.Recompute:
		what = "offload"
	case !sp.Allowed.Offload:
		what = "recompute"
	}
	return spec.LatencyError(fmt.Errorf("placement %q: no schedule found within latency budget %d and memory %d, with or without %s", sp.Placement.Name, sp.Latency, sp.Memory, what))
}

// withinLatency is s re-timed under the spec's latency budget
// (construct.WithLatency), s itself without a budget, and nil where its
// orders meet none.
func withinLatency(sp spec.Spec, s *schedule.Schedule) *schedule.Schedule {
	if sp.Latency <= 0 || s == nil {
		return s
	}
	out, ok := construct.WithLatency(s, sp.Latency)
	if !ok {
		return nil
	}
	return out
}

// portfolio is the constructions of step 1 (construct.Portfolio).
func portfolio(ctx context.Context, sp spec.Spec) ([]construct.Entry, error) {
	return construct.Portfolio(ctx, sp)
}

// solveAllWithin is solveAll under sp's latency budget (0: none): the
// rule of every micro-batch in the encoding, the budget recorded in the
// schedule.
func solveAllWithin(ctx context.Context, sp spec.Spec, opt smt.Options) (*schedule.Schedule, *smt.Solution, error) {
	p, n, memory, latency := sp.Placement, sp.MicroBatches, sp.Memory, sp.Latency
	if latency <= 0 {
		return solveAll(ctx, sp, opt)
	}
	opt.LoadCuts = true
	refs := encode.AllInstances(sp)
	pr := encode.InstanceProblem(sp, refs, nil)
	pr.Deadlines = encode.LatencyDeadlines(sp, refs)
	sol, err := smt.MinimizeMakespan(ctx, pr, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("placement %q, %d micro-batches, memory %d, latency budget %d: %w", p.Name, n, memory, latency, err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory, Latency: latency}}
	for k, r := range refs {
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: sol.Starts[k]})
	}
	return s, sol, nil
}

// latencyOptimal is step 3b of Run under a latency budget: the
// time-optimal search of all N micro-batches with the rule of every one,
// from res.Schedule as a hint and within the phase effort, where the N·K
// instances are at most maxPhaseTasks and the schedule is not already at
// the lower bound; its schedule replaces res.Schedule where it ends
// earlier, and its proof proves the result (Result.Proven). Errors leave
// res as it is.
func latencyOptimal(ctx context.Context, sp spec.Spec, opt Options, res *Result) {
	p := sp.Placement
	n := sp.MicroBatches
	if opt.SolverOnly || ctx.Err() != nil || res.Schedule == nil || res.Gap() <= 0 || n*len(p.Blocks) > maxPhaseTasks || res.Fallback {
		return
	}
	effort := opt.PhaseEffort
	switch {
	case effort == 0:
		effort = DefaultPhaseEffort
	case effort < 0:
		effort = 0
	}
	t0 := time.Now()
	s, sol, err := solveAllWithin(ctx, sp, smt.Options{Seed: opt.Seed, Effort: effort, Hint: startsOf(res.Schedule, encode.AllInstances(sp))})
	res.Times.Warmup += time.Since(t0)
	if err != nil {
		return
	}
	if s, _, err = onLinks(s); err != nil {
		return
	}
	if schedule.Makespan(s) <= res.Makespan() {
		res.Schedule, res.Source, res.TO = s, Source{Kind: SourceSolver}, sol
	}
}
