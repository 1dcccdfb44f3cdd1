package search

import (
	"context"
	"slices"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// ReplanEffort caps every solver call of a replan by default (Options'
// Effort, PhaseEffort and RefineEffort): a replan wants a good schedule
// at once, not a proof. At this cap the proofs that no shorter period
// exists, which take most of a fresh search's solver time, are given up
// (m-shape, memory 6, with one link ten times slower: between 100 000 and
// 200 000 units), while the checks that find a period or a phase schedule
// mostly finish; the cap, unlike a time limit, gives the same answer on
// every run.
const ReplanEffort = 50_000

// Names of the starts a replan gives the search (Start.Name).
const (
	StartOldOrders   = "the old orders"
	StartOldRepetend = "the old repetend"
)

// ReplanOptions configure Replan.
type ReplanOptions struct {
	MaxNR int // largest N_R tried; 0: from the budget
	Seed  int // random seed of the solver
	// Effort caps every solver call: 0 means ReplanEffort, a negative
	// value no cap to the repetend and phase searches (and the
	// refinement's default cap).
	Effort int
	// Refine lets the solver re-optimise the ends of the new schedule
	// whatever built it, as Run does; by default only a greedy schedule's
	// (RefineGreedyOnly).
	Refine bool
}

// ReplanResult is a replan's search result and how the old schedule
// fared on the new cluster.
type ReplanResult struct {
	*Result
	// OldOrders is the makespan of the old schedule's per-device orders
	// on the new cluster; nil where they break a budget there.
	OldOrders *int
	// OldRepetend is the makespan of the old repetend re-timed on the new
	// cluster; nil where it was not re-timed (none, no period fits, or
	// nothing to gain: see Start.Repetend).
	OldRepetend *int
	// OldRepetendKept says that the new schedule repeats the old
	// repetend's offsets, re-timed: the solver found no shorter period
	// from there.
	OldRepetendKept bool
}

// Replan searches a new schedule of old's placement, micro-batches and
// budget on cluster c (a link slowed down, a device replaced), p being
// that placement on c, warm-started from old: its per-device orders
// compacted under the new times (compact.OnCluster) and its repetend
// (the file's, or the one its steady state repeats) are starts
// (Options.Start) beside the constructions and baselines; every solver
// call is capped at opt.Effort, and only greedy ends are refined.
func Replan(ctx context.Context, old *schedule.Schedule, p *placement.Placement, c *cluster.Cluster, opt ReplanOptions) (*ReplanResult, error) {
	out := &ReplanResult{}
	var start []Start
	if s, err := compact.OnCluster(old, c); err == nil {
		out.OldOrders = ptr(schedule.Makespan(s))
		s.Cluster, s.Given = nil, nil
		start = append(start, Start{Name: StartOldOrders, Schedule: s})
	}
	rp := old.Repetend
	if rp == nil {
		rp = schedule.FindRepetend(old)
	}
	if rp != nil {
		start = append(start, Start{Name: StartOldRepetend, Repetend: rp})
	}
	res, err := ReplanStarts(ctx, spec.Spec{Placement: p, MicroBatches: old.MicroBatches, Memory: old.Memory}, start, opt)
	if err != nil {
		return nil, err
	}
	out.Result = res
	for _, cd := range res.Contenders {
		if cd.Source == (Source{Kind: SourceStart, Name: StartOldRepetend}) {
			out.OldRepetend = ptr(cd.Makespan)
		}
	}
	out.OldRepetendKept = rp != nil && res.Repetend != nil && res.Source.Kind == SourceRepetend &&
		res.Repetend.NR == rp.NR && slices.Equal(res.Repetend.Offsets, rp.Offsets)
	return out, nil
}

// ReplanStarts searches a schedule of sp as Replan does — every solver call capped at opt.Effort (0: ReplanEffort),
// only greedy ends refined unless opt.Refine — from the given starts
// (none: a search with a replan's effort, for a placement that has no
// old schedule, such as one repartitioned after a device left).
func ReplanStarts(ctx context.Context, sp spec.Spec, start []Start, opt ReplanOptions) (*Result, error) {
	effort := opt.Effort
	if effort == 0 {
		effort = ReplanEffort
	}
	// A negative effort means no cap to the repetend and phase searches
	// (their convention) and the refinement's default cap (its own: a
	// negative RefineEffort would leave the refinement out).
	return Run(ctx, sp, Options{
		MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed,
		Start: start, Effort: effort, PhaseEffort: effort, RefineEffort: max(effort, 0), RefineGreedyOnly: !opt.Refine,
	})
}

func ptr[T any](v T) *T { return &v }
