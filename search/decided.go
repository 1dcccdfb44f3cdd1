package search

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// decidedEffort caps each solver call of the decided repetend's search
// when the options give no effort of their own (Options.Effort 0): a
// few seconds on 8 devices.
const decidedEffort = 2_000_000

// decidedRepetend is the step of Run (with UseTime) that decides in the
// steady state: a repetend of short period whose per-block decisions fit
// the budget (repetend.SearchDecided, top-down from what the best
// schedule so far takes per micro-batch), repeated exactly and compacted
// (Decided.Unroll), and unrolled into list schedules that follow its
// order and take its decisions (construct.Savings.Blocks), with the
// reloads asked for as the rule's list schedules do and early.
// Each verified schedule is offered; the repetend is returned (nil when
// none was found or the encoding does not apply).
func decidedRepetend(ctx context.Context, sp spec.Spec, opt Options, best *schedule.Schedule, offer func(Source, *schedule.Schedule)) (*repetend.Decided, error) {
	p := sp.Placement
	n := sp.MicroBatches
	do := repetend.DecideOptions{MaxNR: opt.MaxNR, Seed: opt.Seed, Effort: opt.Effort}
	if do.Effort == 0 {
		do.Effort = decidedEffort
	}
	if best != nil {
		do.MaxPeriod = schedule.Makespan(best)/n + 1
	}
	d, err := repetend.SearchDecided(ctx, spec.Spec{Placement: p, Memory: sp.Memory, Allowed: sp.Allowed}, do)
	if err != nil || d == nil {
		if err == repetend.ErrDecisionsUnsupported {
			err = nil
		}
		return nil, err
	}
	k := len(p.Blocks)
	prio := make([]int, n*k)
	for m := range n {
		for i := range k {
			prio[m*k+i] = d.Starts[i] + (m-d.Offsets[i])*d.Period
		}
	}
	u := d.Unroll(spec.Spec{Placement: p, MicroBatches: n, Memory: sp.Memory})
	if s, err := compact.Compact(u.Spec, compact.Keep{From: u}); err == nil {
		offer(Source{Kind: SourceConstruction, Name: fmt.Sprintf("repetend with decisions/unrolled/period %d", d.Period)}, s)
	}
	for _, early := range []bool{false, true} {
		sv := construct.Savings{Offload: sp.Allowed.Offload, Recompute: sp.Allowed.Recompute, Blocks: d.Actions, Early: early}
		s, err := construct.List(p, n, construct.ListOptions{Memory: sp.Memory, Priority: prio, Savings: sv})
		if err != nil {
			continue // stuck under the budget in its warmup or cooldown
		}
		offer(Source{Kind: SourceConstruction, Name: fmt.Sprintf("repetend with decisions/%s/period %d", sv, d.Period)}, s)
	}
	return d, nil
}
