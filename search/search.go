package search

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/overlap"
	"github.com/tessel-pp/tessel/refine"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Options are the effort of Run: what it tries, for how long, with which
// seeds and starts. The problem itself (placement, micro-batches, budgets,
// decisions) is Run's spec.Spec.
type Options struct {
	MaxNR    int // largest N_R tried; 0: from the budget
	Strategy repetend.Strategy
	Jobs     int
	Seed     int
	Effort   int // repetend.Options.Effort
	// PhaseEffort caps each solver call of the warmup and cooldown
	// searches (smt.Options.Effort); 0 means DefaultPhaseEffort, and a
	// negative value means no cap. A capped phase keeps the best schedule
	// found and is reported as not proven; the cap is deterministic.
	PhaseEffort int
	// SolverOnly leaves out the constructions, the baselines and the
	// refinement: the search is then the paper's alone (repetend, lazy
	// completion, time-optimal phases). For measuring and testing the
	// solver; users want the default.
	SolverOnly bool
	// RefineEffort caps each solver call that re-optimises the ends of
	// the best schedule (refine.Options.Effort): 0 means
	// refine.DefaultEffort, a negative value leaves the schedule as it is.
	RefineEffort int
	// RefineGreedyOnly leaves the refinement to a schedule whose ends
	// are greedy — a construction's, a baseline's, a Start.Repetend's —
	// and keeps the repetend's (its warmup and cooldown are the solver's)
	// and a Start schedule (a previous search's answer) as they are. For
	// a quick search whose proofs are capped (tessel replan), where
	// nothing is proven and the refinement would otherwise run on every
	// schedule. It leaves out the large-neighbourhood search too.
	RefineGreedyOnly bool
	// LNSSteps is the number of windows anywhere in the schedule that
	// the large-neighbourhood search (refine.LNS) gives the solver after
	// the refinement of the ends, each capped by RefineEffort: 0 means
	// DefaultLNSSteps, a negative value none. It is the search's
	// deterministic effort; UseTime replaces it with the time left.
	LNSSteps int
	// DecidedWindows is the number of windows that decide (each
	// instance's keep, offload or recompute free: refine.LNSOptions.
	// Decisions) given to a schedule with decisions without UseTime, and
	// only where it has at most maxDecidedInstances instances: 0 means
	// none. Each window encodes the whole schedule, so they cost seconds
	// where the rest of such a search costs a fraction of one; with
	// UseTime they run as the time allows.
	DecidedWindows int
	// UseTime keeps the search improving until ctx ends (a time limit)
	// or the schedule is proven: the large-neighbourhood search then
	// sweeps growing windows with a new solver seed each round instead
	// of stopping after LNSSteps windows, and runs whatever the gap. The
	// result then depends on the time given, not only on the input.
	UseTime bool
	// TimeLimit is the time limit ctx was given (0: none), named in the
	// report of an answer found under it (Result.Stopped).
	TimeLimit time.Duration
	// Start lists schedules of the same placement, micro-batch count and
	// budget to start from beside the constructions and the baselines
	// (tessel replan: a previous plan's orders on a new cluster). Each
	// must verify; it joins the candidates under its name, and the search
	// never returns anything worse. A start may instead give a repetend
	// (a previous plan's): see Start.Repetend.
	Start    []Start
	Progress func(Progress)
}

// Start is a schedule the search starts from (Options.Start), or a
// repetend.
type Start struct {
	Name     string
	Schedule *schedule.Schedule
	// Repetend, with Schedule nil, is a repetend to start from, of this
	// placement's blocks but timed elsewhere (tessel replan: the old
	// plan's, found on the old cluster). Its offsets are first moved
	// towards ones that suit this placement (repetend.Adapt, no solver).
	// Where the solver is to search for a shorter period than the modulo
	// schedules' and these offsets might reach one (their solver-free
	// bound is shorter), they are re-timed here (repetend.Retime) and
	// checked for a warmup and a cooldown; the full schedule they make,
	// with list-scheduled warmup and cooldown, joins the candidates under Name,
	// and the re-timed repetend is the solver's incumbent where its period
	// is shorter than the modulo schedules'. Offsets that fit no period
	// under the budget are left out, not an error.
	Repetend *schedule.Repetend
}

// Progress is a snapshot of a running search.
type Progress struct {
	Stage string // "constructions", "repetend", "warmup and cooldown", "refining", "improving" (step 5), "repetend, again" (UseTime)
	// Repetend is the repetend search's own progress, during that stage.
	Repetend *repetend.Progress
	// BestMakespan is the least makespan of a verified schedule so far
	// (0 while none); LowerBound the makespan's lower bound.
	BestMakespan, LowerBound int
}

// DefaultPhaseEffort lets a warmup or cooldown proof run for about a
// second per solver call on this project's reference machine: enough to
// prove most phases optimal, and bounded where a proof is out of reach
// (nn-shape's warmup, whose makespan it still improves from the greedy
// 36 to 27 against a lower bound of 24).
const DefaultPhaseEffort = 1_000_000

// refineGapRatio: the ends are re-optimised only where the gap to the
// lower bound is more than 1/refineGapRatio (2%) of the makespan. Below it,
// the most a refinement could win is not worth its seconds (nn-shape,
// 4 devices, 128 micro-batches: 2.5 s spent on a gap of 1.3%, nothing
// won).
const refineGapRatio = 50

// DefaultLNSSteps is the number of windows of the large-neighbourhood
// search without a time limit (Options.LNSSteps).
const DefaultLNSSteps = refine.DefaultSteps

// Limits on what is given to the solver: beyond them an encoding costs
// more memory and time than it can win back, and the constructions answer
// alone. The repetend's encoding has a Boolean per pair of blocks on a
// device; a phase's, per pair of instances.
const (
	maxSolverBlocks = 256
	maxPhaseTasks   = MaxPhaseInstances
)

// MaxPhaseInstances is the most instances (N·K) the solver takes whole:
// the time-optimal search of all micro-batches under a latency budget
// runs only up to it, and a report says so.
const MaxPhaseInstances = 320

// Times split the search time as the paper's Fig. 10 does, with the
// constructions first.
type Times struct {
	Total, Constructions, Repetend, Warmup, Cooldown, Refine time.Duration
}

// Contender is one schedule the search started from — a given start, a
// construction or a baseline — verified and within the budget.
type Contender struct {
	Source   Source
	Makespan int
}

// SourceKind is what kind of work built a schedule.
type SourceKind int

const (
	// SourceRepetend is the Tessel search: a repetend with its
	// time-optimal warmup and cooldown (or, with fewer micro-batches than
	// N_R, the time-optimal schedule of all of them).
	SourceRepetend SourceKind = iota + 1
	// SourceConstruction is a solver-free construction (package construct).
	SourceConstruction
	// SourceBaseline is a baseline schedule (package baseline).
	SourceBaseline
	// SourceStart is a schedule given in Options.Start, or the schedule
	// of a start's repetend.
	SourceStart
	// SourceSolver is the time-optimal search's own schedule (Optimal).
	SourceSolver
)

// Source says what built a schedule.
type Source struct {
	Kind SourceKind
	// Name names the construction ("modulo", "list/…"), the baseline
	// ("1f1b", …) or the start; it is empty for the repetend and the
	// solver.
	Name string
	// Refined says that the solver re-optimised the schedule's ends
	// (package refine).
	Refined bool
	// Windows says that the large-neighbourhood search over windows
	// anywhere in the schedule shortened it (refine.LNS, Run's step 5).
	Windows bool
	// Paired says that forwards and backwards of the schedule were
	// paired into overlapped actions (package overlap).
	Paired bool
}

// String is the source as tessel prints it: "repetend", "solver", a
// construction's or a start's name, "baseline " and a baseline's name;
// ", refined" after it where the ends were re-optimised.
func (s Source) String() string {
	var t string
	switch s.Kind {
	case SourceRepetend:
		t = "repetend"
	case SourceSolver:
		t = "solver"
	case SourceBaseline:
		t = "baseline " + s.Name
	default:
		t = s.Name
	}
	if s.Refined {
		t += ", refined"
	}
	if s.Windows {
		t += ", improved in windows"
	}
	if s.Paired {
		t += ", forwards and backwards overlapped"
	}
	return t
}

// Unrefined is s before any refinement: what the refinement started
// from.
func (s Source) Unrefined() Source {
	s.Refined, s.Windows = false, false
	return s
}

// Result is a verified schedule and how it was found.
type Result struct {
	// Schedule is the verified schedule of least makespan found.
	Schedule *schedule.Schedule
	// Source says what built Schedule: the Tessel search (repetend,
	// warmup and cooldown), a construction, a baseline or a start.
	Source Source
	// Repetend is the repetend of least period found (nil when none fits
	// the budget with N_R ≤ MaxNR); Schedule need not be built from it
	// when another schedule ends earlier at this N.
	Repetend *repetend.Repetend
	// Search is the solver's repetend search; nil when it was not run
	// (Skipped says why: the modulo schedule's period meets the lower
	// bound, the placement is too large for the solver, or the search was
	// stopped first).
	Search *repetend.Result
	// Skipped says why the solver's repetend search did not run.
	Skipped string
	// Contenders are the schedules the search started from, in the order
	// it took them: given starts, constructions, baselines.
	Contenders []Contender
	Bounds     bound.Bounds
	// Refined counts the work of re-optimising the schedule's ends.
	Refined refine.Stats
	Times   Times
	// WarmupProven and CooldownProven say whether the phases of the
	// repetend's schedule are proven time-optimal.
	WarmupProven, CooldownProven bool
	// Fallback is set when N < N_R: the repetend's schedule is then the
	// time-optimal search of all N micro-batches (TO holds its outcome).
	Fallback bool
	TO       *smt.Solution
	// Decisions is set when the search could offload or recompute: the
	// solver's proofs, among schedules that keep every activation, then
	// prove nothing about the whole search.
	Decisions bool
	// Latency is the latency budget the schedule meets (Options.Latency;
	// 0: none).
	Latency int
	// BoundBy names the argument that gives Bounds.Makespan
	// (rules.LowerBounds).
	BoundBy bound.MakespanBound
	// Decided is the repetend with decisions the search found and
	// unrolled (nil without decisions, or when none was found).
	Decided *repetend.Decided
	// Assigned is set when the devices of blocks with candidates were
	// chosen (package choose): Bounds then hold for every assignment,
	// and the solver's proofs, for the chosen one alone, prove nothing.
	Assigned bool

	// AssignedPeriod is set when the repetend with assignment literals
	// proved that no choice of devices has a repetend (N_R ≤ MaxNR) of
	// a shorter period than Repetend's (package choose).
	AssignedPeriod bool
	// Stopped says why the search ended before its own end, "" when it
	// ran to it: the time limit (an answer that depends on the time
	// given, Options.TimeLimit named), or ctx cancelled (Ctrl-C).
	Stopped string

	// Window is the micro-batches of the window searched where the
	// schedule is a window's extended periodically to N (window.go); 0
	// where the search ran on all N.
	Window int
	// Steady is Schedule's steady state where the search knows it (an
	// extension's); nil otherwise (schedule.SteadyOf finds it).
	Steady *schedule.SteadyState

	improved    int // the large-neighbourhood search's makespan so far, for Progress
	phaseChecks int // solver calls of the warmup and cooldown searches
}

// SolverChecks counts the solver calls of the search: the repetend
// search's, the warmup's and cooldown's (or the time-optimal schedule's
// with fewer micro-batches than N_R), and the refinement's.
func (r *Result) SolverChecks() int {
	n := r.phaseChecks + r.Refined.Checks
	if r.Search != nil {
		n += r.Search.Stats.Checks
	}
	return n
}

// Makespan of the schedule found.
func (r *Result) Makespan() int { return schedule.Makespan(r.Schedule) }

// Gap is how far the makespan may be from the optimum: makespan − lower
// bound.
func (r *Result) Gap() int { return r.Makespan() - r.Bounds.Makespan }

// RunnerUp is the best candidate other than the one the schedule came from:
// the least makespan among the constructions, baselines and starts the
// search began with, the earliest listed on a tie. ok is false when there
// is no other candidate (a solver-only search, or a single one that won).
func (r *Result) RunnerUp() (best Contender, ok bool) {
	winner := r.Source.Unrefined()
	for _, c := range r.Contenders {
		if c.Source == winner {
			continue
		}
		if !ok || c.Makespan < best.Makespan {
			best, ok = c, true
		}
	}
	return best, ok
}

// RepetendUsed reports whether Schedule repeats Repetend in its steady
// state: the repetend the schedule records (at least two iterations) has
// Repetend's period, and every block runs at Repetend's time in it, up to
// one shift of time and micro-batch for all blocks (where the iterations
// are counted from does not matter). A construction that ends earlier
// than the repetend's own schedule, or a schedule of fewer micro-batches
// than N_R, does not use it.
func (r *Result) RepetendUsed() bool {
	if r.Repetend == nil || r.Schedule == nil || r.Schedule.Repetend == nil {
		return false
	}
	got, want := r.Schedule.Repetend, r.Repetend
	k := len(r.Schedule.Placement.Blocks)
	if got.Period != want.Period || got.Iterations < 2 || len(got.Offsets) != k || len(want.Offsets) != k || len(want.Starts) != k {
		return false
	}
	first := map[schedule.Ref]int{}
	for _, in := range r.Schedule.Instances {
		first[in.Ref()] = in.Start
	}
	// Block i of micro-batch m starts at x_i + (m − o_i)·P in the
	// schedule and at s_i + (m − n_i)·P in the repetend: the difference
	// must be one constant.
	P := got.Period
	for i := range k {
		x, ok := first[schedule.Ref{Block: i, Micro: got.Offsets[i]}]
		if !ok {
			return false
		}
		c := (x - got.Offsets[i]*P) - (want.Starts[i] - want.Offsets[i]*P)
		if i == 0 {
			first[schedule.Ref{Block: -1}] = c
		} else if c != first[schedule.Ref{Block: -1}] {
			return false
		}
	}
	return true
}

// PeriodProven reports whether no repetend with N_R ≤ MaxNR has a
// shorter period than Repetend. With channels only the lower bound proves
// it.
func (r *Result) PeriodProven() bool {
	if r.Repetend == nil {
		return false
	}
	if r.Repetend.Period <= r.Bounds.Period {
		return true
	}
	if r.Assigned && !r.Decisions {
		return r.AssignedPeriod
	}
	if r.Decisions || r.Assigned {
		return false
	}
	if r.Schedule != nil && links.Queued(r.Schedule.Placement) {
		// The solver's proof is among repetends whose transfers never
		// wait for a link (package repetend), a narrower set.
		return false
	}
	return r.Search != nil && r.Search.Proven && r.Search.Best != nil && r.Search.Best.Period == r.Repetend.Period
}

// Proven reports whether the schedule is proven optimal for N: its
// makespan meets the lower bound, or every part of the search ran to its
// end (the time-optimal search of all N, or a least-period repetend with
// time-optimal warmup and cooldown that no construction beat). With
// channels only the lower bound or the time-optimal search of all N
// proves it.
func (r *Result) Proven() bool {
	if r.Gap() <= 0 {
		return true
	}
	if r.Decisions || r.Assigned {
		return false
	}
	if r.Latency > 0 {
		// The phases' proofs leave out the micro-batches that cross into
		// the iterations, which the budget re-times: only the lower
		// bound or the time-optimal search of all N proves it.
		return r.TO != nil && r.TO.Proven && (r.Source.Kind == SourceSolver || (r.Fallback && r.Source.Kind == SourceRepetend))

	}
	if r.Schedule.Placement.Overlap != nil {
		// The solver's repetends and phases pair nothing: only the lower
		// bound (which counts what pairs save) proves a schedule.
		return false
	}
	if r.Fallback {
		// With channels too: the time-optimal encoding has the links'
		// rule (and a schedule re-timed after it is not marked proven).
		return r.Source.Kind == SourceRepetend && r.TO != nil && r.TO.Proven
	}
	if links.Queued(r.Schedule.Placement) {
		// The repetend's proof is among repetends whose transfers never
		// wait, and the phases leave out links that cross into the
		// iterations: neither proves the assembled schedule optimal.
		return false
	}
	return r.Source == Source{Kind: SourceRepetend} && r.PeriodProven() && r.WarmupProven && r.CooldownProven
}

// Settled reports whether the schedule is proven optimal among all
// schedules: its makespan meets the lower bound, or the time-optimal
// search of all N micro-batches proved it. The paper's proof — a
// least-period repetend with time-optimal warmup and cooldown — is about
// schedules that repeat that repetend only: with time to use
// (Options.UseTime) the search goes on past it, not past this.
func (r *Result) Settled() bool {
	return r.Gap() <= 0 || (r.Proven() && r.TO != nil)
}

// done reports whether the search has nothing left to prove: settled
// with time to use, Proven at the default effort.
func (r *Result) done(opt Options) bool {
	if opt.UseTime {
		return r.Settled()
	}
	return r.Proven()
}

// pairWork bounds the constructions and baselines the search pairs
// greedily (package overlap) where the placement lets forwards and
// backwards overlap: the best of them, while the sum of their squared
// instance counts stays within it (always the best one).
const pairWork = 1 << 24

// ErrNoRepetend means no repetend fits the memory budget.
var ErrNoRepetend = errors.New("no repetend fits the memory budget")

// Run finds the schedule of N micro-batches with the least makespan it
// can under the memory budget:
//
//  1. the constructions (modulo and list schedules) and every baseline
//     that applies and fits the budget, in milliseconds: the best of them
//     is the incumbent, and the search never returns anything worse;
//  2. the Tessel search (Algorithm 1 with lazy completion) for a repetend
//     of shorter period than the modulo schedule's, top-down from it;
//  3. the time-optimal warmup and cooldown of the least-period repetend,
//     and the full schedule it makes, compacted;
//  4. where the best schedule is not proven, the solver re-optimises its
//     ends (package refine);
//  5. then windows anywhere in it (refine.LNS): DefaultLNSSteps of them,
//     or, with UseTime, rounds of windows and of constructions restarted
//     with perturbed priorities until ctx ends (after the repetend
//     search again without its effort cap from its best repetend).
//
// Schedules in opt.Start (a replan's old orders) join the incumbents
// first; a start's repetend (a replan's old one), re-timed after the
// constructions, may be the incumbent of step 2. The schedule of least
// makespan wins; on a tie, the repetend's.
// When ctx ends, Run returns at once with the best verified schedule
// so far: a step that checks ctx stops at its next check, and a step that
// does not within StopGrace is left to finish in the background, its
// answer unused (stop.go). Result.Stopped then says why the search ended
// early. A deadline is met by the search's caller too: Run answers
// before it by the time a caller takes to verify, report and write an
// answer of this size (at most a tenth of the time given).
//
// Its errors are the search's own: a solver's that proves no schedule
// exists is ErrInfeasible, one of a search stopped before it found
// anything ErrStopped (errors.Is).
func Run(ctx context.Context, sp spec.Spec, opt Options) (*Result, error) {
	res, err := watch(ctx, sp, opt)
	return res, own(err)
}

// run is Run's search, its errors not yet the search's own; inc, when
// set, is given the best result so far at every step (for watch).
func run(ctx context.Context, sp spec.Spec, opt Options, inc *incumbent) (*Result, error) {
	p := sp.Placement
	t0 := time.Now()
	if sp.MicroBatches < 1 {
		return nil, fmt.Errorf("search: %d micro-batches, want at least 1", sp.MicroBatches)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if err := limits.CheckInstances(sp.MicroBatches, len(p.Blocks)); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if err := limits.Check("N_R", opt.MaxNR, limits.NR); err != nil {
		return nil, fmt.Errorf("search: %w", err)
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
	if e := noFit(sp, true); e != nil {
		return nil, e // proven: no schedule fits, whatever N_R
	}
	if windowed(sp, opt) {
		if res, ok, err := runWindow(ctx, sp, opt, inc, t0); ok || err != nil {
			return res, err
		}
	}
	if timedWindow(sp, opt) {
		var res *Result
		var ok bool
		var err error
		if opt, res, ok, err = startFromWindow(ctx, sp, opt, inc, t0); ok || err != nil {
			return res, err
		}
	}
	st := newState(sp, opt, inc, t0)
	st.publishEarly(ctx) // decisions: never windowed
	if err := st.runPhases(ctx); err != nil {
		return nil, err
	}
	st.res.Times.Total = time.Since(t0)
	st.res.Stopped = stopReason(ctx, opt, st.res.Times.Total)
	return st.res, nil
}

// newState is the state of a search of sp before its first phase.
func newState(sp spec.Spec, opt Options, inc *incumbent, t0 time.Time) *state {
	st := &state{sp: sp, opt: opt, t0: t0, inc: inc, res: &Result{Decisions: sp.Allowed.Any(), Latency: sp.Latency, Bounds: rules.LowerBounds(sp)}}
	st.res.BoundBy = st.res.Bounds.By
	return st
}

// runPhases runs every phase that applies, in order.
func (st *state) runPhases(ctx context.Context) error {
	for _, ph := range phases() {
		if ph.applies(st, ctx) {
			if err := ph.run(st, ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// researchRepetend runs the solver's repetend search again, from
// res.Repetend and without the effort cap, for a quarter of the time ctx has
// left, where the first search ran and did not prove its period; a
// repetend of shorter period becomes res.Repetend, and its schedule
// (time-optimal warmup and cooldown within the phase effort) replaces
// res.Schedule where it ends earlier. Errors leave res as it is: this
// is extra time, and the answer so far stands.
func researchRepetend(ctx context.Context, sp spec.Spec, opt Options, res *Result, report func(string, *repetend.Progress)) {
	deadline, ok := ctx.Deadline()
	if !ok || ctx.Err() != nil || res.Search == nil || res.PeriodProven() || res.Repetend == nil {
		return
	}
	half, cancel := context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/4))
	defer cancel()
	again := opt
	again.Effort = -1
	t0 := time.Now()
	sr, err := solveRepetend(half, sp, again, res.Repetend, func(pr repetend.Progress) { report("repetend, again", &pr) })
	res.Times.Repetend += time.Since(t0)
	if err != nil || sr.Best == nil || sr.Best.Period > res.Repetend.Period {
		return
	}
	if sr.Best.Period == res.Repetend.Period {
		if sr.Proven {
			res.Search = sr // the period is now proven
		}
		return
	}
	res.Search, res.Repetend = sr, sr.Best
	if ctx.Err() != nil {
		return
	}
	report("warmup and cooldown", nil)
	trial := *res
	s, err := repetendSchedule(ctx, sp, sr.Best, opt, &trial)
	if err == nil && schedule.Makespan(s) < schedule.Makespan(res.Schedule) {
		*res = trial
		res.Schedule, res.Source = s, Source{Kind: SourceRepetend}
	}
}

// improve is step 5 of Run: refine.LNS on res.Schedule, LNSSteps windows
// (DefaultLNSSteps for 0). With UseTime it goes on in rounds until ctx
// ends or the schedule is proven: round r ≥ 1 first restarts the list
// constructions with priorities perturbed by r (construct.Restart),
// gives the best of them DefaultLNSSteps windows and keeps it where it
// ends earlier, then gives the best schedule lnsRoundSteps more windows
// with solver seed Seed + r, its sweep going on where the last round's
// stopped (refine.LNSOptions.Resume); after those, where the schedule
// repeats a repetend, windows on a short copy of it (short, below).
// Round 0 begins with the same windows as the default effort, so a time
// limit long enough to finish them never ends later than the default.
func improve(ctx context.Context, sp spec.Spec, opt Options, res *Result, progress func(int)) error {
	p := sp.Placement
	next := 0 // where the sweeps over base go on
	// base is the schedule the windows improve: res.Schedule, or its
	// orders unpaired where its forwards and backwards are paired (the
	// windows pair nothing; with UseTime alone).
	base, baseSource := res.Schedule, res.Source
	if len(base.Pairs) > 0 {
		u, err := unpaired(base)
		if err != nil {
			return nil // its orders unpaired are no schedule: it stays as it is
		}
		base, baseSource = u, res.Source
		baseSource.Paired = false
	}
	lns := func(s *schedule.Schedule, seed, steps, resume int, progress func(int)) (*schedule.Schedule, error) {
		// With time to use, windows run on links that queue too: the
		// solver's window leaves the queues out, and the compaction of
		// its answer, which keeps them, decides.
		lo := refine.LNSOptions{Effort: opt.RefineEffort, Seed: seed, Steps: steps, Resume: resume, Progress: progress, Links: opt.UseTime}
		if len(s.Decisions) > 0 && (opt.UseTime || (opt.DecidedWindows > 0 && len(s.Instances) <= maxDecidedInstances)) {
			// A schedule that decides: its windows decide too. Each
			// encodes the whole schedule, so without a time limit
			// only DecidedWindows of them are given, and none to a
			// schedule of more than maxDecidedInstances.
			lo.Decisions = spec.Decisions{Offload: sp.Allowed.Offload, Recompute: sp.Allowed.Recompute}
			if !opt.UseTime {
				lo.Steps = opt.DecidedWindows
			}
		}
		out, st, err := refine.LNS(ctx, s, lo)
		if s == base {
			next = st.Next
		}
		res.Refined.Steps += st.Steps
		res.Refined.Improved += st.Improved
		res.Refined.Checks += st.Checks
		return out, err
	}
	keep := func(s *schedule.Schedule, source Source) {
		if s = withinLatency(sp, s); s == nil {
			return
		}
		if schedule.Makespan(s) < schedule.Makespan(base) {
			base, baseSource = s, source
		}
		if opt.UseTime && p.Overlap != nil {
			// Paired here: step 6 of Run finds ctx over.
			if paired, ok := overlap.Pair(ctx, s); ok && schedule.Makespan(paired) < schedule.Makespan(s) {
				s, source.Paired = paired, true
			}
		}
		if schedule.Makespan(s) < schedule.Makespan(res.Schedule) {
			res.Schedule, res.Source = s, source
			progress(schedule.Makespan(s))
		}
	}
	if !opt.UseTime {
		s, err := lns(base, opt.Seed, opt.LNSSteps, 0, progress)
		if err != nil {
			return err
		}
		source := baseSource
		source.Windows = true
		keep(s, source)
		return nil
	}
	// short improves the ends of base on a copy of it that keeps
	// shortIterations of its repetend's iterations (compact.Resize): a
	// sweep of the copy's windows takes a fraction of the long
	// schedule's, and the ends are where a long schedule's makespan is
	// lost. The copy, improved, is resized back through its own repetend
	// and joins where it ends earlier.
	var baseRep *schedule.Repetend
	var repOf *schedule.Schedule
	short := func(round int) error {
		if repOf != base {
			repOf, baseRep = base, base.Repetend
			if baseRep == nil {
				baseRep = schedule.FindRepetend(base)
			}
		}
		r := baseRep
		if r == nil || r.Iterations <= shortIterations {
			return nil
		}
		small, err := compact.Resize(base, r, base.MicroBatches-(r.Iterations-shortIterations))
		if err != nil {
			return nil // not exactly periodic (decisions, pairs): the long one's windows only
		}
		s, err := lns(small, opt.Seed+round, lnsRoundSteps, 0, nil)
		if err != nil || schedule.Makespan(s) >= schedule.Makespan(small) {
			return err
		}
		r2 := schedule.FindRepetend(s)
		if r2 == nil {
			return nil
		}
		if long, err := compact.Resize(s, r2, base.MicroBatches); err == nil {
			source := baseSource
			source.Windows = true
			keep(long, source)
		}
		return nil
	}
	for round := 0; ctx.Err() == nil && !res.Settled(); round++ {
		if round > 0 {
			c, err := construct.Restart(ctx, spec.Spec{Placement: p, MicroBatches: sp.MicroBatches, Memory: sp.Memory}, round)
			if err != nil {
				return err
			}
			if c != nil && ctx.Err() == nil {
				s, err := lns(c.Schedule, opt.Seed+round, DefaultLNSSteps, 0, nil)
				if err != nil {
					return err
				}
				source := Source{Kind: SourceConstruction, Name: c.Name, Windows: schedule.Makespan(s) < c.Makespan}
				if schedule.Makespan(s) < schedule.Makespan(base) {
					next = 0 // a new schedule: its sweeps start at its end
				}
				keep(s, source)
			}
		}
		if ctx.Err() != nil || res.Settled() {
			break
		}
		source := baseSource
		source.Windows = true
		s, err := lns(base, opt.Seed+round, lnsRoundSteps, next, progress)
		if err != nil {
			return err
		}
		keep(s, source)
		if ctx.Err() != nil || res.Settled() {
			break
		}
		if err := short(round); err != nil {
			return err
		}
	}
	return nil
}

// unpaired is s with its forwards and backwards run one after the other
// in its devices' orders (no Pairs), compacted and verified.
func unpaired(s *schedule.Schedule) (*schedule.Schedule, error) {
	c, err := compact.Compact(s.Spec, compact.Keep{Orders: schedule.Orders(s)})
	if err != nil {
		return nil, fmt.Errorf("unpairing the schedule: %w", err)
	}
	u := &schedule.Schedule{Spec: s.Spec, Instances: c.Instances, Decisions: s.Decisions}
	if err := verify.Schedule(u); err != nil {
		return nil, fmt.Errorf("unpairing the schedule: %w", err)
	}
	return u, nil
}

// maxDecidedInstances is the most instances a schedule that decides may
// have for windows that decide without a time limit: each window
// encodes the whole schedule (8 devices, 16 chunks, 64 micro-batches:
// 3,072 instances, 4 windows about 40 s on 2 shared cores, 2026-11-24).
const maxDecidedInstances = 1024

// shortIterations is how many iterations of its repetend the short copy
// of improve keeps: enough for the windows at its ends to leave the
// iterations between them as they were.
const shortIterations = 4

// lnsRoundSteps is the number of windows of one round of improve with
// UseTime.
const lnsRoundSteps = 4 * DefaultLNSSteps

// lnsWanted reports whether step 5 of Run runs: with UseTime on any
// schedule not proven; otherwise where LNSSteps is not negative, the
// search is not a quick one (RefineGreedyOnly), and the gap is above 2%
// of the makespan (as for the refinement of the ends) or the schedule is
// small enough for the solver to take whole (maxPhaseTasks instances),
// where windows are cheap and a step of the makespan is worth more than
// 2% (nn-shape, 6 micro-batches: 61 against the proven 60).
func lnsWanted(opt Options, res *Result) bool {
	if opt.UseTime {
		return true
	}
	if opt.LNSSteps < 0 || opt.RefineGreedyOnly {
		return false
	}
	return res.Gap()*refineGapRatio > res.Makespan() || len(res.Schedule.Instances) <= maxPhaseTasks
}

// fromPeriodic is a modulo schedule as a repetend.
func fromPeriodic(ps *construct.Periodic) *repetend.Repetend {
	offsets, nr := ps.Offsets()
	return &repetend.Repetend{NR: nr, Offsets: offsets, Period: ps.Period, Starts: ps.RepetendStarts()}
}

// solveRepetend runs the solver's repetend search with the lazy
// completion check, from the incumbent when there is one.
func solveRepetend(ctx context.Context, sp spec.Spec, opt Options, incumbent *repetend.Repetend, progress func(repetend.Progress)) (*repetend.Result, error) {
	var mu sync.Mutex
	cache := map[string]bool{}
	accept := func(ctx context.Context, nr int, offsets []int) (bool, error) {
		key := fmt.Sprint(nr, offsets)
		mu.Lock()
		ok, seen := cache[key]
		mu.Unlock()
		if seen {
			return ok, nil
		}
		ok, err := Feasible(ctx, sp, repetend.Assignment{NR: nr, Offsets: offsets})
		if err != nil {
			return false, err
		}
		mu.Lock()
		cache[key] = ok
		mu.Unlock()
		return ok, nil
	}
	return repetend.Search(ctx, sp, repetend.Options{
		MaxNR: opt.MaxNR, Strategy: opt.Strategy, Jobs: opt.Jobs, Seed: opt.Seed, Effort: opt.Effort,
		Accept: accept, Progress: progress, Incumbent: incumbent,
	})
}

// repetendSchedule is the full schedule of a repetend: time-optimal
// warmup and cooldown (the solver within the phase effort, or a list
// schedule where a phase is too large for it), the iterations, compacted.
// With fewer micro-batches than N_R it is the time-optimal schedule of
// all of them, where that is small enough for the solver.
func repetendSchedule(ctx context.Context, sp spec.Spec, r *repetend.Repetend, opt Options, res *Result) (*schedule.Schedule, error) {
	p := sp.Placement
	effort := opt.PhaseEffort
	switch {
	case effort == 0:
		effort = DefaultPhaseEffort
	case effort < 0:
		effort = 0
	}
	n := sp.MicroBatches
	if n < r.NR {
		if n*len(p.Blocks) > maxPhaseTasks {
			return nil, fmt.Errorf("placement %q: %d micro-batches, fewer than N_R %d, and too many instances for the time-optimal search", p.Name, n, r.NR)
		}
		t1 := time.Now()
		var hint []int
		if res.Schedule != nil {
			hint = startsOf(res.Schedule, encode.AllInstances(sp))
		}
		s, sol, err := solveAllWithin(ctx, sp, smt.Options{Seed: opt.Seed, Effort: effort, Hint: hint})
		res.Times.Warmup = time.Since(t1)
		if err != nil {
			return nil, err
		}
		res.phaseChecks += sol.Checks
		s, retimed, err := onLinks(s)
		if err != nil {
			return nil, fmt.Errorf("time-optimal schedule: %w", err)
		}
		if retimed {
			sol.Proven = false
		}
		res.Fallback, res.TO = true, sol
		return s, nil
	}
	warm := Warmup(p, r.Offsets)
	cool := Cooldown(p, r.Offsets, r.NR, n)
	phase := func(refs []schedule.Ref, entry []int) (*smt.Solution, error) {
		pr := encode.InstanceProblem(sp, refs, entry)
		pr.Deadlines = encode.LatencyDeadlines(sp, refs)
		if len(refs) > maxPhaseTasks {
			starts := smt.Greedy(pr)
			if starts == nil {
				return nil, fmt.Errorf("%d instances, too many for the solver, and no list schedule fits the budget", len(refs))
			}
			return &smt.Solution{Starts: starts, Makespan: pr.Makespan(starts)}, nil
		}
		return smt.MinimizeMakespan(ctx, pr, smt.Options{Seed: opt.Seed, Effort: effort})
	}
	t1 := time.Now()
	ws, err := phase(warm, nil)
	res.Times.Warmup = time.Since(t1)
	if err != nil {
		return nil, fmt.Errorf("placement %q: warmup: %w", p.Name, err)
	}
	t2 := time.Now()
	cs, err := phase(cool, cooldownEntry(p, r.Offsets, r.NR, n))
	res.Times.Cooldown = time.Since(t2)
	if err != nil {
		return nil, fmt.Errorf("placement %q: cooldown: %w", p.Name, err)
	}
	res.WarmupProven, res.CooldownProven = ws.Proven, cs.Proven
	res.phaseChecks += ws.Checks + cs.Checks
	s, err := Assemble(sp, Parts{Repetend: r, Warmup: warm, Cooldown: cool, WarmupStarts: ws.Starts, CooldownStarts: cs.Starts})
	if err != nil {
		return nil, err
	}
	c, err := recompact(s)
	if err != nil || sp.Latency <= 0 {
		return c, err
	}
	if c = withinLatency(sp, c); c == nil {
		return nil, fmt.Errorf("placement %q: the repetend's schedule meets no latency budget %d", p.Name, sp.Latency)
	}
	return c, nil
}

// startsOf returns the start of every ref in s.
func startsOf(s *schedule.Schedule, refs []schedule.Ref) []int {
	at := make(map[schedule.Ref]int, len(s.Instances))
	for _, in := range s.Instances {
		at[in.Ref()] = in.Start
	}
	out := make([]int, len(refs))
	for k, r := range refs {
		out[k] = at[r]
	}
	return out
}

// Status is a one-line account of the search so far, for a status line:
// its stage, the best makespan and its gap, the repetend search's
// progress, and elapsed.
func (pr Progress) Status(elapsed time.Duration) string {
	best := "none yet"
	if pr.BestMakespan > 0 {
		best = fmt.Sprintf("%d (gap %d to the lower bound %d)", pr.BestMakespan, pr.BestMakespan-pr.LowerBound, pr.LowerBound)
	}
	line := fmt.Sprintf("search: %s, best makespan %s", pr.Stage, best)
	if rp := pr.Repetend; rp != nil {
		period := "none yet"
		if rp.BestPeriod > 0 {
			period = fmt.Sprint(rp.BestPeriod)
		}
		seen := fmt.Sprint(rp.Stats.Seen)
		if rp.Total > 0 {
			seen += fmt.Sprintf(" of %d", rp.Total)
		}
		line += fmt.Sprintf("; %s: N_R %d, %s seen, %d solved, period %s (lower bound %d)", rp.Method, rp.NR, seen, rp.Stats.Solved, period, rp.LowerBound)
	}
	return line + ", " + elapsed.Round(time.Second).String()
}
