package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/overlap"
	"github.com/tessel-pp/tessel/refine"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/latency"
	"github.com/tessel-pp/tessel/rule/pairs"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// # Search as phases
//
// Run keeps an incumbent — the best verified schedule so far, in
// state.res — and runs an ordered list of phases (phases), each saying
// when it applies. The starts that give the first incumbents are a list
// of their own (starts). Adding a phase is one entry in phases; adding a
// start, one entry in starts.

// state is what the phases of Run share: the problem, the effort, the
// result so far (its Schedule is the incumbent) and what the phases learn
// on the way.
type state struct {
	sp  spec.Spec
	opt Options
	res *Result
	t0  time.Time
	// inc, when set, is given the best result so far at every step
	// (watch answers with it when ctx ends and a step does not return).
	inc *incumbent
	// incumbent is the repetend the solver starts from: the modulo
	// schedules' best, or a start's (started) that beat it.
	incumbent, started *repetend.Repetend
	// bestKept is the least makespan of a start that keeps every
	// activation; keptBound, where the search may decide, the makespan
	// below which no schedule that keeps every activation ends (the
	// solver's schedules keep them all).
	bestKept, keptBound int
	// seeds are the constructions and baselines the pairing phase pairs.
	seeds []seed
	// offered, where collect is set, is every schedule offered, for a
	// search on a window of micro-batches (window.go) to extend each.
	collect bool
	offered []seed
	// built is every baseline built so far, by name (state.baseline).
	built   map[string]builtBaseline
	carrier *baseline.Carrier
}

// seed is a start's schedule and what built it.
type seed struct {
	src Source
	s   *schedule.Schedule
}

// phase is one step of Run: applies says whether it runs on the state
// as the phases before it left it.
type phase struct {
	name    string
	applies func(*state, context.Context) bool
	run     func(*state, context.Context) error
}

// phases is Run's steps, in order (see Run's doc).
func phases() []phase {
	return []phase{
		{"starts", always, (*state).runStarts},
		{"pairing of the starts", (*state).constructs, (*state).pairSeeds},
		{"repetends of the starts", always, (*state).startRepetends},
		{"repetend with decisions", (*state).decidesWithTime, (*state).decidedRepetend},
		{"repetend", always, (*state).repetend},
		{"warmup and cooldown", (*state).wantsPhases, (*state).warmupCooldown},
		{"a schedule", always, (*state).requireSchedule},
		{"time-optimal under the latency budget", switchedOn(latency.Rule{}), (*state).latencyOptimal},
		{"refinement of the ends", (*state).refinable, (*state).refineEnds},
		{"repetend, again", (*state).usesTime, (*state).researchRepetend},
		{"the whole schedule to the solver", (*state).usesTime, (*state).wholeOptimal},
		{"windows", (*state).wantsWindows, (*state).windows},
		{"pairing of the best", switchedOn(pairs.Rule{}), (*state).pairBest},
		{"its repetend named", always, (*state).nameRepetend},
	}
}

func always(*state, context.Context) bool { return true }

// switchedOn is the applies of a phase for the specs that switch r on:
// the rule's own On decides.
func switchedOn(r rule.Rule) func(*state, context.Context) bool {
	return func(st *state, _ context.Context) bool { return r.On(st.sp) }
}

// usesTime reports whether the phases that use the time given run:
// UseTime, not SolverOnly.
func (st *state) usesTime(context.Context) bool { return st.opt.UseTime && !st.opt.SolverOnly }

// start is one source of the schedules the search starts from: given
// schedules, the constructions, the baselines. build offers each of its
// schedules (state.contender).
type start struct {
	name    string
	applies func(*state, context.Context) bool
	build   func(*state, context.Context) error
}

// starts is the registry of starts, in the order their schedules join
// the contenders.
func starts() []start {
	return []start{
		{"given schedules", always, (*state).givenStarts},
		{"constructions", (*state).constructs, (*state).constructions},
		{"baselines", (*state).constructs, (*state).baselines},
		{"zb-auto, shortest setting", (*state).constructs, (*state).zbAutoShortest},
	}
}

// report tells opt.Progress the stage and the best makespan so far.
func (st *state) report(stage string, rp *repetend.Progress) {
	st.inc.publish(st.res, st.t0)
	if st.opt.Progress == nil {
		return
	}
	res := st.res
	pr := Progress{Stage: stage, Repetend: rp, LowerBound: res.Bounds.Makespan}
	if res.Schedule != nil {
		pr.BestMakespan = schedule.Makespan(res.Schedule)
	}
	if res.improved > 0 && res.improved < pr.BestMakespan {
		pr.BestMakespan = res.improved
	}
	st.opt.Progress(pr)
}

// offer makes s the incumbent where it ends earlier, re-timed under the
// latency budget (left out where its orders meet none).
func (st *state) offer(source Source, s *schedule.Schedule) {
	if s = withinLatency(st.sp, s); s == nil {
		return // its orders meet no schedule within the latency budget
	}
	if st.collect {
		st.offered = append(st.offered, seed{source, s})
	}
	if ms := schedule.Makespan(s); len(s.Decisions) == 0 && (st.bestKept == 0 || ms < st.bestKept) {
		st.bestKept = ms
	}
	if st.res.Schedule == nil || schedule.Makespan(s) < schedule.Makespan(st.res.Schedule) {
		st.res.Schedule, st.res.Source = s, source
		st.inc.publish(st.res, st.t0)
	}
}

// contender lists s among the contenders and offers it.
func (st *state) contender(source Source, s *schedule.Schedule) {
	st.res.Contenders = append(st.res.Contenders, Contender{Source: source, Makespan: schedule.Makespan(s)})
	st.offer(source, s)
}

// constructs reports whether the constructions and baselines run (not
// SolverOnly).
func (st *state) constructs(context.Context) bool { return !st.opt.SolverOnly }

// fail wraps err with the placement's name.
func (st *state) fail(what string, err error) error {
	if what == "" {
		return fmt.Errorf("placement %q: %w", st.sp.Placement.Name, err)
	}
	return fmt.Errorf("placement %q: %s: %w", st.sp.Placement.Name, what, err)
}

// runStarts is Run's step 1: every start that applies, in order.
func (st *state) runStarts(ctx context.Context) error {
	for _, s := range starts() {
		if s.applies(st, ctx) {
			if err := s.build(st, ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// givenStarts offers opt.Start's schedules; their repetends are re-timed
// after the constructions (startRepetends).
func (st *state) givenStarts(context.Context) error {
	for _, g := range st.opt.Start {
		if g.Schedule == nil && g.Repetend != nil {
			continue // re-timed after the constructions: startRepetends
		}
		s := g.Schedule
		if s == nil || !s.Placement.Equal(st.sp.Placement) || s.MicroBatches != st.sp.MicroBatches || s.Memory != st.sp.Memory {
			return fmt.Errorf("search: start %q: not a schedule of this placement, micro-batch count and budget", g.Name)
		}
		if err := verify.Schedule(s); err != nil {
			return fmt.Errorf("search: start %q: %w", g.Name, err)
		}
		if s = withinLatency(st.sp, s); s == nil {
			continue // its orders meet no schedule within the latency budget
		}
		st.contender(Source{Kind: SourceStart, Name: g.Name}, s)
	}
	return nil
}

// constructions offers the portfolio's schedules; the modulo schedules'
// repetend of least period (then N_R), within MaxNR and the latency
// budget, becomes the solver's incumbent.
func (st *state) constructions(ctx context.Context) error {
	p := st.sp.Placement
	st.report("constructions", nil)
	cands, err := portfolio(ctx, st.sp)
	if err != nil {
		return st.fail("", err)
	}
	for _, c := range cands {
		src := Source{Kind: SourceConstruction, Name: c.Name}
		st.res.Contenders = append(st.res.Contenders, Contender{Source: src, Makespan: c.Makespan})
		st.offer(src, c.Schedule)
		if p.Overlap != nil {
			st.seeds = append(st.seeds, seed{src, c.Schedule})
		}
		if c.Periodic == nil || (st.opt.MaxNR > 0 && fromPeriodic(c.Periodic).NR > st.opt.MaxNR) {
			continue
		}
		r := fromPeriodic(c.Periodic)
		if st.sp.Latency > 0 && r.Latency(p) > st.sp.Latency {
			continue // its steady state is over the latency budget
		}
		if inc := st.incumbent; inc == nil || r.Period < inc.Period || (r.Period == inc.Period && r.NR < inc.NR) {
			st.incumbent = r
		}
	}
	return nil
}

// baselines offers every baseline that applies, takes only decisions the
// spec allows and, under a latency budget, meets it once re-timed.
func (st *state) baselines(ctx context.Context) error {
	for _, m := range baseline.All() {
		if ctx.Err() != nil && st.res.Schedule != nil {
			break // a stopped search keeps what it has (but gets one)
		}
		s, err := st.baseline(m)
		if err != nil || !st.sp.Allowed.Permit(s.Count()) {
			continue // not applicable, over the budget, or taking decisions the options do not allow
		}
		if s = withinLatency(st.sp, s); s == nil {
			continue // its orders meet no schedule within the latency budget
		}
		src := Source{Kind: SourceBaseline, Name: m.Name}
		st.contender(src, s)
		st.seeds = append(st.seeds, seed{src, s})
	}
	return nil
}

// builtBaseline is a baseline's schedule or error, kept so that a
// search builds each baseline once (publishEarly, then baselines).
type builtBaseline struct {
	s   *schedule.Schedule
	err error
}

// baseline is m's schedule of the spec's placement, micro-batches and
// budget, built on the constructions' window of micro-batches and
// carried to N where they are (baseline.Carrier), once per search.
func (st *state) baseline(m baseline.Baseline) (*schedule.Schedule, error) {
	if b, ok := st.built[m.Name]; ok {
		return b.s, b.err
	}
	if st.built == nil {
		st.built = map[string]builtBaseline{}
		st.carrier = &baseline.Carrier{W: construct.DecisionWindow(st.sp)}
	}
	s, err := st.carrier.Build(m, spec.Spec{Placement: st.sp.Placement, MicroBatches: st.sp.MicroBatches, Memory: st.sp.Memory})
	st.built[m.Name] = builtBaseline{s, err}
	return s, err
}

// zbAutoShortest offers the zero-bubble auto-scheduler's setting that
// ends first (its authors keep the one whose longest stage is shortest)
// where it is the best so far.
func (st *state) zbAutoShortest(context.Context) error {
	s, err := baseline.ZBAutoShortest(spec.Spec{Placement: st.sp.Placement, MicroBatches: st.sp.MicroBatches, Memory: st.sp.Memory})
	if err != nil || !st.sp.Allowed.Permit(s.Count()) {
		return nil
	}
	if s = withinLatency(st.sp, s); s != nil && (st.res.Schedule == nil || schedule.Makespan(s) < schedule.Makespan(st.res.Schedule)) {
		src := Source{Kind: SourceStart, Name: "zb-auto, shortest setting"}
		st.contender(src, s)
		st.seeds = append(st.seeds, seed{src, s})
	}
	return nil
}

// pairSeeds offers the best constructions and baselines with forwards and
// backwards paired greedily where that helps, as many as pairWork allows
// (a pairing costs about I² for I instances); then the starts are done.
func (st *state) pairSeeds(ctx context.Context) error {
	slices.SortStableFunc(st.seeds, func(a, b seed) int { return cmp.Compare(schedule.Makespan(a.s), schedule.Makespan(b.s)) })
	work := 0
	for k, c := range st.seeds {
		if work += len(c.s.Instances) * len(c.s.Instances); (k > 0 && work > pairWork) || ctx.Err() != nil {
			break
		}
		if paired, ok := overlap.Pair(ctx, c.s); ok {
			src := c.src
			src.Paired = true
			st.contender(src, paired)
		}
	}
	st.res.Repetend = st.incumbent
	st.res.Times.Constructions = time.Since(st.t0)
	st.report("constructions", nil)
	return nil
}

// startRepetends re-times the starts' repetends (Start.Repetend); one
// that beats the modulo schedules' becomes the solver's incumbent.
func (st *state) startRepetends(ctx context.Context) error {
	started, err := startRepetends(ctx, st.sp, st.opt, st.res, st.offer)
	if err != nil {
		return err
	}
	if started != nil {
		st.incumbent, st.started = started, started
	}
	return nil
}

// decidesWithTime reports whether step 2a runs: decisions, time to use,
// a gap to close and a placement within the solver's limit.
func (st *state) decidesWithTime(ctx context.Context) bool {
	res := st.res
	return res.Decisions && st.opt.UseTime && ctx.Err() == nil && (res.Schedule == nil || res.Gap() > 0) && len(st.sp.Placement.Blocks) <= maxSolverBlocks
}

// decidedRepetend is step 2a: the repetend whose steady state decides
// too, unrolled (decidedRepetend).
func (st *state) decidedRepetend(ctx context.Context) error {
	st.report("repetend with decisions", nil)
	t := time.Now()
	d, err := decidedRepetend(ctx, st.sp, st.opt, st.res.Schedule, st.contender)
	st.res.Times.Repetend += time.Since(t)
	if err != nil {
		return st.fail("repetend with decisions", err)
	}
	st.res.Decided = d
	return nil
}

// repetend is step 2: the solver's repetend, for a shorter period than
// the incumbent's, unless there is nothing to gain (Result.Skipped says
// why); an error where nothing at all was found.
func (st *state) repetend(ctx context.Context) error {
	res, sp, p := st.res, st.sp, st.sp.Placement
	t1 := time.Now()
	if res.Decisions && res.Schedule != nil {
		// The solver's schedules keep every activation: none ends before
		// the bound of schedules that keep every activation.
		st.keptBound = rules.LowerBounds(spec.Spec{Placement: p.Kept(), MicroBatches: sp.MicroBatches, Memory: sp.Memory}).Makespan
	}
	switch {
	case res.Decisions && res.Schedule != nil && schedule.Makespan(res.Schedule) <= st.keptBound:
		res.Skipped = fmt.Sprintf("a schedule that offloads or recomputes ends by %d, when no schedule that keeps every activation can end (lower bound %d)", schedule.Makespan(res.Schedule), st.keptBound)
	case res.Decisions && res.Schedule != nil && len(res.Schedule.Decisions) > 0 && (st.bestKept == 0 || schedule.Makespan(res.Schedule) < st.bestKept):
		// The solver's repetends keep every activation; where every
		// construction and baseline that keeps them loses to one that
		// decides, their search is left out (it is slow on large
		// placements and rarely gains that much).
		st.keptBound = schedule.Makespan(res.Schedule)
		res.Skipped = fmt.Sprintf("a schedule that offloads or recomputes ends at %d, before every one that keeps every activation", schedule.Makespan(res.Schedule))
	case st.incumbent != nil && st.incumbent.Period <= res.Bounds.Period:
		res.Skipped = "the modulo schedule's period meets the lower bound"
		if st.started != nil {
			res.Skipped = "a start's period meets the lower bound"
		}
	case ctx.Err() != nil:
		res.Skipped = "stopped before the solver started"
	case len(p.Blocks) > maxSolverBlocks && res.Schedule != nil:
		res.Skipped = fmt.Sprintf("%d blocks is more than the solver's limit of %d", len(p.Blocks), maxSolverBlocks)
	default:
		sr, err := solveRepetend(ctx, sp, st.opt, st.incumbent, func(pr repetend.Progress) { st.report("repetend", &pr) })
		res.Times.Repetend = time.Since(t1)
		if err != nil {
			return st.fail("repetend search", err)
		}
		res.Search = sr
		if sr.Best != nil {
			res.Repetend = sr.Best
		}
	}
	if res.Repetend != nil || res.Schedule != nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("placement %q: stopped before any schedule was found: %w", p.Name, stopCause(ctx, st.opt))
	}
	if res.Decisions && sp.Latency > 0 {
		return noneWithin(sp)
	}
	maxNR := st.opt.MaxNR
	if res.Search != nil {
		maxNR = res.Search.MaxNR
	}
	if e := noFit(sp, false); e != nil {
		return e
	}
	return fmt.Errorf("placement %q: memory %d, N_R ≤ %d: %w", p.Name, sp.Memory, maxNR, ErrNoRepetend)
}

// wantsPhases reports whether step 3 runs: a repetend, time, a gap, and
// no schedule that decides already below what keeping every activation
// can reach.
func (st *state) wantsPhases(ctx context.Context) bool {
	res := st.res
	return res.Repetend != nil && ctx.Err() == nil && (res.Schedule == nil || res.Gap() > 0) && (st.keptBound == 0 || schedule.Makespan(res.Schedule) > st.keptBound)
}

// warmupCooldown is step 3: the repetend's own schedule, time-optimal
// warmup and cooldown around it; it wins ties.
func (st *state) warmupCooldown(ctx context.Context) error {
	res := st.res
	st.report("warmup and cooldown", nil)
	s, err := repetendSchedule(ctx, st.sp, res.Repetend, st.opt, res)
	switch {
	case err != nil && res.Schedule == nil && res.Decisions && st.sp.Latency > 0:
		return noneWithin(st.sp)
	case err != nil && res.Schedule == nil:
		return err
	case err == nil && (res.Schedule == nil || schedule.Makespan(s) <= schedule.Makespan(res.Schedule)):
		res.Schedule, res.Source = s, Source{Kind: SourceRepetend}
	}
	return nil
}

// requireSchedule is the error of a search stopped before any schedule.
func (st *state) requireSchedule(ctx context.Context) error {
	if st.res.Schedule == nil {
		return fmt.Errorf("placement %q: stopped before any schedule was found: %w", st.sp.Placement.Name, stopCause(ctx, st.opt))
	}
	return nil
}

// latencyOptimal is step 3b (latencyOptimal).
func (st *state) latencyOptimal(ctx context.Context) error {
	latencyOptimal(ctx, st.sp, st.opt, st.res)
	return nil
}

// refinable reports whether step 4 runs: the schedule is not proven in
// the paper's sense, its gap is above 2% (refineGapRatio), the options
// let it be refined, and it neither decides nor pairs (the solver's
// windows do neither).
func (st *state) refinable(ctx context.Context) bool {
	res, opt := st.res, st.opt
	return !opt.SolverOnly && opt.RefineEffort >= 0 && ctx.Err() == nil && !res.done(opt) && res.Gap()*refineGapRatio > res.Makespan() && refinable(opt, res.Source) &&
		len(res.Schedule.Decisions) == 0 && len(res.Schedule.Pairs) == 0
}

// refineEnds is step 4: the solver re-optimises the ends of the best
// schedule (refine.Improve).
func (st *state) refineEnds(ctx context.Context) error {
	res := st.res
	st.report("refining", nil)
	t3 := time.Now()
	s, stats, err := refine.Improve(ctx, res.Schedule, refine.Options{Effort: st.opt.RefineEffort, Seed: st.opt.Seed,
		Progress: func(int) { st.report("refining", nil) }})
	res.Times.Refine = time.Since(t3)
	res.Refined = stats
	if err != nil {
		return st.fail("", err)
	}
	if s = withinLatency(st.sp, s); s != nil && schedule.Makespan(s) < schedule.Makespan(res.Schedule) {
		res.Schedule = s
		res.Source.Refined = true
	}
	return nil
}

// researchRepetend is the repetend search again with time to use
// (researchRepetend).
func (st *state) researchRepetend(ctx context.Context) error {
	researchRepetend(ctx, st.sp, st.opt, st.res, st.report)
	return nil
}

// wholeOptimal gives the solver the whole schedule where it is small
// enough (wholeOptimal): a proof settles the search.
func (st *state) wholeOptimal(ctx context.Context) error {
	st.report("improving", nil)
	t := time.Now()
	wholeOptimal(ctx, st.sp, st.opt, st.res)
	st.res.Times.Refine += time.Since(t)
	return nil
}

// wantsWindows reports whether step 5 runs: nothing left to prove
// (Result.done), lnsWanted, windows that decide only where asked, and a
// paired schedule only with time to use (the windows run on its orders
// unpaired, each improvement paired again).
func (st *state) wantsWindows(ctx context.Context) bool {
	res, opt := st.res, st.opt
	return !opt.SolverOnly && opt.RefineEffort >= 0 && ctx.Err() == nil && !res.done(opt) && lnsWanted(opt, res) &&
		(len(res.Schedule.Decisions) == 0 || (res.Decisions && (opt.UseTime || opt.DecidedWindows > 0))) && (len(res.Schedule.Pairs) == 0 || opt.UseTime)
}

// windows is step 5: the large-neighbourhood search over windows anywhere
// in the schedule (improve).
func (st *state) windows(ctx context.Context) error {
	res := st.res
	st.report("improving", nil)
	t4 := time.Now()
	err := improve(ctx, st.sp, st.opt, res, func(ms int) { res.improved = ms; st.report("improving", nil) })
	res.Times.Refine += time.Since(t4)
	if err != nil {
		return st.fail("", err)
	}
	return nil
}

// pairBest is step 6: forwards and backwards of the best schedule paired
// where that helps (package overlap).
func (st *state) pairBest(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	if paired, ok := overlap.Pair(ctx, st.res.Schedule); ok && schedule.Makespan(paired) <= schedule.Makespan(st.res.Schedule) {
		st.res.Schedule = paired
		st.res.Source.Paired = true
	}
	return nil
}

// nameRepetend names the repetend a schedule built without one repeats
// in its steady state, so that renderings mark it (checked like any
// other).
func (st *state) nameRepetend(context.Context) error {
	s := st.res.Schedule
	if s.Repetend != nil {
		return nil
	}
	if len(s.Instances) > schedule.SteadyLimit {
		// The scan of the start times takes about a second at this size
		// (the report stops looking at schedule.SteadyLimit too): a
		// schedule in which no micro-batch runs as one before it, some
		// period later (schedule.FindPeriodicity, milliseconds; a list
		// schedule that decides, at 10,000 micro-batches), is not
		// scanned.
		if _, ok := schedule.FindPeriodicity(s); !ok {
			return nil
		}
	}
	if rp := schedule.FindRepetend(s); rp != nil {
		named := *s
		named.Repetend = rp
		if verify.Schedule(&named) == nil {
			st.res.Schedule = &named
		}
	}
	return nil
}
