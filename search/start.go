package search

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// startRepetends re-times the repetends of opt.Start (Start.Repetend)
// where the solver's repetend search is to run — the incumbent's period
// is above the lower bound and the placement within the solver's limit.
// Their offsets are first adapted to p (repetend.Adapt), and re-timed
// only where the adapted offsets' solver-free bound (repetend.PeriodBound)
// is below the incumbent's period; elsewhere the re-timed repetend could
// not start the solver lower, and the work is left out. Each full
// schedule joins the candidates; the re-timed repetend of shortest period
// (then least N_R, then first given) that beats res.Repetend replaces it
// and is returned, nil if none does. Its time counts in Times.Total only.
func startRepetends(ctx context.Context, sp spec.Spec, opt Options, res *Result, offer func(Source, *schedule.Schedule)) (*repetend.Repetend, error) {
	p := sp.Placement
	inc := res.Repetend
	if (inc != nil && inc.Period <= res.Bounds.Period) || len(p.Blocks) > maxSolverBlocks {
		return nil, nil
	}
	var won *repetend.Repetend
	for _, st := range opt.Start {
		if st.Schedule != nil || st.Repetend == nil || ctx.Err() != nil {
			continue
		}
		rp := st.Repetend
		if len(rp.Offsets) == len(p.Blocks) {
			// Offsets that suited the old cluster, moved towards ones
			// that suit p (a slower link wants more micro-batches in
			// flight across it), without the solver.
			adapted := *rp
			adapted.Offsets = repetend.Adapt(p, rp.NR, rp.Offsets)
			rp = &adapted
			if inc != nil && repetend.PeriodBound(p, rp.Offsets) >= inc.Period {
				continue // its period cannot be shorter than the incumbent's: no solver call
			}
		}
		r, s, err := startRepetend(ctx, sp, rp, opt)
		if err != nil {
			return nil, fmt.Errorf("search: start %q: %w", st.Name, err)
		}
		if s != nil {
			src := Source{Kind: SourceStart, Name: st.Name}
			res.Contenders = append(res.Contenders, Contender{Source: src, Makespan: schedule.Makespan(s)})
			offer(src, s)
		}
		if r == nil || (opt.MaxNR > 0 && r.NR > opt.MaxNR) {
			continue
		}
		if inc == nil || r.Period < inc.Period || (r.Period == inc.Period && r.NR < inc.NR) {
			inc, won = r, r
		}
	}
	if won != nil {
		res.Repetend = won
	}
	return won, nil
}

// startRepetend re-times a start's repetend on p (Start.Repetend): the
// least period of its offsets under the budget, if its warmup and
// cooldown exist (Feasible), and the full schedule it makes with list
// schedules of warmup and cooldown, compacted — a candidate in milliseconds;
// the time-optimal phases are searched only for the repetend that wins
// (Run's step 3). Both are nil where the offsets fit no period; the
// schedule alone is nil where a phase has no list schedule under the
// budget, there are fewer micro-batches than N_R, or it fails to
// assemble.
func startRepetend(ctx context.Context, sp spec.Spec, rp *schedule.Repetend, opt Options) (*repetend.Repetend, *schedule.Schedule, error) {
	p := sp.Placement
	effort := opt.Effort // as the repetend search's (repetend.Options.Effort)
	switch {
	case effort == 0:
		effort = repetend.DefaultEffort
	case effort < 0:
		effort = 0
	}
	n := sp.MicroBatches
	r, err := repetend.Retime(ctx, spec.Spec{Placement: p, Memory: sp.Memory, MicroBatches: n}, repetend.Assignment{NR: rp.NR, Offsets: rp.Offsets}, repetend.PeriodOptions{Seed: opt.Seed, Effort: effort})
	if err != nil || r == nil {
		return nil, nil, err
	}
	if ok, err := Feasible(ctx, sp, repetend.Assignment{NR: r.NR, Offsets: r.Offsets}); err != nil || !ok {
		return nil, nil, err
	}
	if n < r.NR {
		return r, nil, nil
	}
	warm, cool := Warmup(p, r.Offsets), Cooldown(p, r.Offsets, r.NR, n)
	ws := smt.Greedy(encode.InstanceProblem(sp, warm, nil))
	cs := smt.Greedy(encode.InstanceProblem(sp, cool, cooldownEntry(p, r.Offsets, r.NR, n)))
	if ws == nil || cs == nil {
		return r, nil, nil
	}
	// A candidate is optional: one that fails to assemble or verify is left
	// out, and the repetend still serves as the solver's incumbent.
	s, err := Assemble(sp, Parts{Repetend: r, Warmup: warm, Cooldown: cool, WarmupStarts: ws, CooldownStarts: cs})
	if err != nil {
		return r, nil, nil
	}
	if s, err = recompact(s); err != nil {
		return r, nil, nil
	}
	return r, s, nil
}

// refinable reports whether Run's refinement may run on a schedule
// built by source (Options.RefineGreedyOnly).
func refinable(opt Options, source Source) bool {
	if !opt.RefineGreedyOnly {
		return true
	}
	if source.Kind == SourceRepetend {
		return false
	}
	for _, st := range opt.Start {
		if st.Schedule != nil && source == (Source{Kind: SourceStart, Name: st.Name}) {
			return false
		}
	}
	return true
}

// recompact moves every instance of a valid schedule as early as its
// per-device orders and dependencies allow (compact.Compact: never later,
// same memory) and verifies the result. The repetend is kept when the
// iterations still repeat exactly; otherwise it is dropped, and s itself
// is the answer where it is as short and verifies.
func recompact(s *schedule.Schedule) (*schedule.Schedule, error) {
	cs, err := compact.Compact(spec.New(s.Placement, s.MicroBatches), compact.Keep{Orders: schedule.Orders(s)})
	if err != nil {
		return nil, fmt.Errorf("construct: %w", err)
	}
	ins := cs.Instances
	out := &schedule.Schedule{Spec: spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: ins}
	if s.Repetend != nil {
		rp := *s.Repetend
		rp.Offsets = append([]int(nil), rp.Offsets...)
		out.Repetend = &rp
		if !construct.Repeats(out) {
			out.Repetend = nil
			if schedule.Makespan(s) <= schedule.Makespan(out) && verify.Schedule(s) == nil {
				return s, nil // as short, and it repeats
			}
		}
	}
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("construct: compacted schedule fails verification: %w", err)
	}
	return out, nil
}
