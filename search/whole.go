package search

import (
	"context"
	"time"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// maxWholeTasks is the most instances (N·K) for which a search with time
// to use gives the solver the whole schedule (wholeOptimal): twice the
// default effort's limit on a phase, since the time, not an effort cap,
// bounds the call. The zero-bubble auto-scheduler's setting on 6 stages,
// 12 micro-batches (216 instances): the solver proves in 4 s, on 2
// shared cores, that the greedy's 495 is optimal, where the relaxations
// bound it by 438 (2026-11-27).
const maxWholeTasks = 2 * maxPhaseTasks

// wholeOptimal is a step of Run with time to use (Options.UseTime): the
// time-optimal search of all N micro-batches (the Tessel paper's §III-B)
// from res.Schedule, for half the time ctx has left, where the N·K
// instances are at most maxWholeTasks and the solver's encoding is a
// relaxation of the problem — every rule the placement carries is in it
// or only lengthens a schedule (links that queue: the answer is re-timed
// on them), so that what it refutes bounds every schedule: no decisions
// (offload, recompute), no overlapped pairs. Its schedule replaces
// res.Schedule where it ends earlier; every makespan it refutes raises
// res.Bounds.Makespan, so that a proof settles the search (its makespan
// then meets the bound). Errors leave res as it is: this is extra time.
func wholeOptimal(ctx context.Context, sp spec.Spec, opt Options, res *Result) {
	p, n := sp.Placement, sp.MicroBatches
	deadline, ok := ctx.Deadline()
	if !ok || ctx.Err() != nil || res.Decisions || p.Overlap != nil || res.Fallback || res.Settled() || n*len(p.Blocks) > maxWholeTasks {
		return
	}
	half, cancel := context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/2))
	defer cancel()
	hint := startsOf(res.Schedule, encode.AllInstances(sp))
	s, sol, err := solveAllWithin(half, sp, smt.Options{Seed: opt.Seed, Hint: hint})
	if err != nil {
		return
	}
	res.phaseChecks += sol.Checks
	if sol.Bound == smt.BoundSolver && sol.LowerBound > res.Bounds.Makespan {
		res.Bounds.Makespan = sol.LowerBound
	}
	if s, _, err = onLinks(s); err != nil {
		return
	}
	if schedule.Makespan(s) < res.Makespan() {
		res.Schedule, res.Source = s, Source{Kind: SourceSolver}
	}
}
