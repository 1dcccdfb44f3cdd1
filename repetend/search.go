package repetend

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// Strategy is how the search explores offsets.
type Strategy string

const (
	// StrategyEnumerate solves candidates one by one (the paper's Algorithm 1).
	StrategyEnumerate Strategy = "enumerate"
	// StrategyJoint makes the offsets solver variables, one check per period.
	StrategyJoint Strategy = "joint"
	// StrategyRace runs both and takes the first proven answer.
	StrategyRace Strategy = "race"
)

// Strategies lists the valid strategies (a new slice each call); the
// command line names them with --method.
func Strategies() []Strategy { return []Strategy{StrategyEnumerate, StrategyJoint, StrategyRace} }

// Workers reports whether the strategy uses Options.Jobs: the enumeration
// solves candidates on that many workers (race too, through it); the
// joint search runs one solver and ignores it.
func (m Strategy) Workers() bool { return m == StrategyEnumerate || m == StrategyRace }

// ParseStrategy checks a strategy's name (tessel's --method).
func ParseStrategy(s string) (Strategy, error) {
	for _, m := range Strategies() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown method %q (want enumerate, joint or race)", s)
}

// Options are Search's effort: the range of N_R, the strategy, workers,
// seed, effort, the completion check, progress and an incumbent. The
// problem (the placement, the memory and latency budgets, the
// micro-batches) is Search's spec.
type Options struct {
	MaxNR    int      // largest N_R tried; 0: from the spec's memory budget, at most DefaultNRLimit(p)
	Strategy Strategy // default StrategyJoint
	Jobs     int      // workers of the enumeration; 0: one per core
	Seed     int
	// Effort caps every solver call (z3.SolverOptions.Effort): 0 means
	// DefaultEffort, a negative value no cap. A call that runs out proves
	// nothing: the search goes on and its result is not proven. Unlike a
	// time limit, the cap gives the same answer on every run.
	Effort int
	// Accept is the lazy completion check (the paper's §V): is there a
	// warmup and a cooldown for these offsets under the memory budget? It
	// is called only for repetends that improve on the best so far. nil
	// accepts everything.
	Accept func(ctx context.Context, nr int, offsets []int) (bool, error)
	// Progress, when set, is called (from one goroutine at a time) as the
	// search advances.
	Progress func(Progress)
	// Incumbent, when set, is a repetend already known (a modulo schedule,
	// say) that fits the budget and passes Accept. The search then looks
	// only for shorter periods, top-down from it: the checks that find a
	// repetend are cheap and the one that proves none exists comes last.
	// The result is never worse than the incumbent.
	Incumbent *Repetend
}

// Progress is a snapshot of a running search.
type Progress struct {
	Method     Strategy
	NR         int
	Stats      Stats
	Total      int // candidates of the enumeration up to MaxNR; 0 when unknown (joint, or too many to count)
	BestPeriod int // 0 while none
	LowerBound int
}

// Stats count the work of a search.
type Stats struct {
	Seen     int // candidates enumerated (joint: offset vectors proposed)
	Pruned   int // skipped without the solver: entry memory or period bound
	Solved   int // candidates given to the solver
	Rejected int // improving repetends whose warmup or cooldown cannot be scheduled
	Checks   int // solver calls
}

// Result is the outcome of Search.
type Result struct {
	Best       *Repetend // nil when no repetend exists up to MaxNR
	LowerBound int       // max_d load_d; with channels, and max_ℓ load_ℓ over links
	// Proven is true when no repetend with N_R ≤ MaxNR has a smaller
	// period (the search ran to its end or reached the lower bound).
	// With channels, among repetends whose transfers never wait for
	// their links (see encode.Steady).
	Proven   bool
	MaxNR    int
	Strategy Strategy // the strategy that produced Best (race: the winner)
	Stats    Stats
}

// DefaultEffort is the cap of one solver call of the repetend search:
// a few seconds on this project's reference machine, far above what
// any check of the paper's 4-device settings needs, and a bound on the
// proofs that no repetend reaches a period, which can take minutes on 8
// devices.
const DefaultEffort = 5_000_000

// effort resolves Options.Effort.
func (o Options) effort() int {
	switch {
	case o.Effort == 0:
		return DefaultEffort
	case o.Effort < 0:
		return 0
	}
	return o.Effort
}

// DefaultNRLimit is the largest N_R tried when neither the memory budget
// nor the caller bounds it: twice the devices, past every zero-bubble
// repetend of the paper (Fig. 11 reaches 0 by N_R = 6 on 4 devices).
func DefaultNRLimit(p *placement.Placement) int { return max(2*p.Devices, 2) }

// Search finds the repetend of sp's placement of least period under sp's
// memory and latency budgets (every micro-batch of the repetend's
// iterations within the latency budget, latency.go). sp's micro-batches
// are N of the schedule the repetend is for, 0 if unknown: they matter
// only where one micro-batch leaves memory behind on a device (later
// iterations then start with more). When ctx ends first it returns the
// best repetend found with Proven false.
func Search(ctx context.Context, sp spec.Spec, opt Options) (*Result, error) {
	p := sp.Placement
	if opt.Strategy == "" {
		opt.Strategy = StrategyJoint
	}
	if opt.Jobs <= 0 {
		opt.Jobs = runtime.NumCPU()
	}
	if opt.Accept == nil {
		opt.Accept = func(context.Context, int, []int) (bool, error) { return true, nil }
	}
	if opt.MaxNR <= 0 {
		opt.MaxNR = MaxNR(ctx, sp, DefaultNRLimit(p))
	}
	var (
		r   *Result
		err error
	)
	switch opt.Strategy {
	case StrategyEnumerate:
		r, err = searchEnumerate(ctx, sp, opt)
	case StrategyJoint:
		r, err = searchJoint(ctx, sp, opt)
	case StrategyRace:
		r, err = searchRace(ctx, sp, opt)
	default:
		return nil, fmt.Errorf("repetend: unknown method %q", opt.Strategy)
	}
	if err != nil || r.Best != nil || r.Proven {
		return r, err
	}
	if opt.Incumbent != nil {
		r.Best = opt.Incumbent
		return r, nil
	}
	// Stopped (time limit, Ctrl-C, effort) before any repetend: one
	// micro-batch at a time is always a repetend when one fits in memory.
	seq := Sequential(p)
	if seq != nil && withinBudget(p, encode.IterationEntry(sp, seq.Offsets, 1), sp.Memory) {
		ok, aerr := opt.Accept(context.WithoutCancel(ctx), 1, seq.Offsets)
		if aerr != nil {
			return r, aerr
		}
		if ok && fitsMemory(p, seq, sp.Memory) {
			r.Best = seq
		}
	}
	return r, nil
}

// Sequential is the repetend that runs one micro-batch at a time (N_R 1,
// every offset 0): a list schedule of one micro-batch, repeated every
// makespan of it. It needs no solver, so a search stopped early still has
// an answer. nil when the placement has a cycle. With channels the list
// schedule is the one micro-batch's instance problem, whose transfers
// queue on their links by the rule (encode.SequentialIteration): no
// iteration starts before the last one's tensors have arrived, so the
// rule keeps them as they are.
func Sequential(p *placement.Placement) *Repetend {
	return repetend(1, encode.SequentialIteration(p))
}

// fitsMemory checks a repetend's memory walk on every device from its
// entry memory (the sequential one's is 0).
func fitsMemory(p *placement.Placement, r *Repetend, memory int) bool {
	if !p.Limited(memory) {
		return true
	}
	entry := EntryMemory(p, r.Offsets)
	for d, on := range p.DeviceBlocks() {
		memory := p.Budget(d, memory)
		if memory <= 0 {
			continue
		}
		sort.SliceStable(on, func(a, b int) bool { return r.Starts[on[a]] < r.Starts[on[b]] })
		m := entry[d]
		for _, i := range on {
			m += p.Blocks[i].Memory
			if m > memory {
				return false
			}
		}
	}
	return true
}

func interrupted(err error) bool {
	return errors.Is(err, z3.ErrInterrupted) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// job is a candidate and its place in the enumeration order.
type job struct {
	index int
	cand  Assignment
	bound int
}

// searchEnumerate is Algorithm 1 with Jobs workers. The answer is the
// candidate of least period, ties going to the earliest in enumeration
// order (N_R, then Enumerate's order), so it does not depend on the
// number of workers: a candidate is skipped only when it cannot beat the
// best so far in that order. (One exception: when a solver call reaches
// its effort cap, which bounds it depended on can vary with timing; the
// result is then marked not proven.)
func searchEnumerate(ctx context.Context, sp spec.Spec, opt Options) (*Result, error) {
	p := sp.Placement
	lb := periodLowerBound(p)
	res := &Result{LowerBound: lb, MaxNR: opt.MaxNR, Strategy: StrategyEnumerate}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	e := &enumState{sp: sp, opt: opt, res: res, lb: lb, cancel: cancel, bestIndex: -1}
	if opt.Incumbent != nil {
		// Only a shorter period beats what is known.
		e.best, e.bestIndex = opt.Incumbent, -1
	}
	if opt.Progress != nil {
		e.total = countCandidates(ctx, p, opt.MaxNR)
	}

	jobs := make(chan job)
	var wg sync.WaitGroup
	var pan safego.Panic
	for w := 0; w < opt.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				for range jobs { // a worker that panicked leaves the rest to the others
				}
			}()
			defer pan.Recover()
			e.work(ctx, jobs)
		}()
	}
	exhausted := e.dispatch(ctx, jobs)
	close(jobs)
	wg.Wait()
	pan.Repanic()
	if e.firstErr != nil {
		return res, e.firstErr
	}
	best := e.best
	res.Proven = (exhausted && ctx.Err() == nil && !e.unproven) || (best != nil && best.Period == lb)
	if best != nil && best == opt.Incumbent {
		res.Best = best
		return res, nil
	}
	if best != nil {
		res.Best = best
		if ctx.Err() != nil {
			// Stopped by the clock: the answer depends on timing anyway,
			// and the caller wants it now.
			return res, nil
		}
		// The starts of the winner must not depend on the path the search
		// took (workers, bounds met on the way): solve it once more alone.
		fixed, err := SolveFixed(ctx, sp, Assignment{NR: best.NR, Offsets: best.Offsets}, best.Period, PeriodOptions{Seed: opt.Seed})
		if err != nil {
			if interrupted(err) {
				return res, nil
			}
			return res, err
		}
		res.Best = fixed
	}
	return res, nil
}

// enumState is what searchEnumerate's dispatcher and workers share; mu
// guards the fields below it.
type enumState struct {
	sp        spec.Spec
	opt       Options
	res       *Result
	lb, total int
	cancel    context.CancelFunc

	mu        sync.Mutex
	best      *Repetend
	bestIndex int
	firstErr  error
	unproven  bool // a solver call ran out of effort
}

// better: a repetend of that period, found for candidate index, beats
// the best so far (e.mu held).
func (e *enumState) better(period, index int) bool {
	return e.best == nil || period < e.best.Period || (period == e.best.Period && index < e.bestIndex)
}

// report reports progress at N_R nr (e.mu held).
func (e *enumState) report(nr int) {
	if e.opt.Progress != nil {
		bp := 0
		if e.best != nil {
			bp = e.best.Period
		}
		e.opt.Progress(Progress{Method: StrategyEnumerate, NR: nr, Stats: e.res.Stats, Total: e.total, BestPeriod: bp, LowerBound: e.lb})
	}
}

// work is one worker: it solves the candidates of jobs on its own
// encoding, keeping the best accepted repetend.
func (e *enumState) work(ctx context.Context, jobs <-chan job) {
	opt, res, sp := e.opt, e.res, e.sp
	ps, err := encode.NewPeriodicWorker(sp, encode.RepetendOptions{Seed: opt.Seed, Effort: opt.effort()})
	if err != nil {
		e.mu.Lock()
		if e.firstErr == nil {
			e.firstErr = err
			e.cancel()
		}
		e.mu.Unlock()
		for range jobs {
		}
		return
	}
	defer ps.Close()
	for jb := range jobs {
		e.mu.Lock()
		skip := !e.better(jb.bound, jb.index)
		// Only a period that beats the best so far is worth
		// finding: equal periods win on earlier candidates only.
		hi := upperPeriod(sp.Placement)
		switch {
		case e.best == nil:
		case jb.index < e.bestIndex:
			hi = e.best.Period
		default:
			hi = e.best.Period - 1
		}
		if skip {
			res.Stats.Pruned++
		} else {
			res.Stats.Solved++
		}
		e.mu.Unlock()
		if skip {
			continue
		}
		it, checks, err := ps.Candidate(ctx, jb.cand.NR, jb.cand.Offsets, jb.bound, hi)
		r := repetend(jb.cand.NR, it)
		capped := errors.Is(err, z3.ErrEffort)
		if capped {
			err = nil
		}
		ok := r != nil
		if err == nil && ok {
			ok, err = opt.Accept(ctx, jb.cand.NR, jb.cand.Offsets)
			if err == nil && !ok {
				e.mu.Lock()
				res.Stats.Rejected++
				e.mu.Unlock()
			}
		}
		e.mu.Lock()
		res.Stats.Checks += checks
		if capped {
			e.unproven = true
		}
		if err != nil && !interrupted(err) && e.firstErr == nil {
			e.firstErr = err
			e.cancel()
		}
		if err == nil && ok && e.better(r.Period, jb.index) {
			e.best, e.bestIndex = r, jb.index
		}
		e.report(jb.cand.NR)
		e.mu.Unlock()
	}
}

// dispatch sends every candidate up to MaxNR that may beat the best to
// the workers, in enumeration order, and says whether it sent them all
// (or stopped only because the lower bound was reached).
func (e *enumState) dispatch(ctx context.Context, jobs chan<- job) (exhausted bool) {
	sp, opt, res, lb := e.sp, e.opt, e.res, e.lb
	p := sp.Placement
	index := 0
	for nr := 1; nr <= opt.MaxNR; nr++ {
		stopped := !Enumerate(ctx, p, nr, func(c Assignment) bool {
			index++
			e.mu.Lock()
			res.Stats.Seen++
			done := e.best != nil && e.best.Period == lb
			prune := !withinBudget(p, encode.IterationEntry(sp, c.Offsets, c.NR), sp.Memory)
			var bound int
			if !prune {
				bound = PeriodBound(p, c.Offsets)
				prune = !e.better(bound, index)
			}
			if prune {
				res.Stats.Pruned++
			}
			e.mu.Unlock()
			if done {
				return false // nothing later can beat the lower bound
			}
			if prune {
				return true
			}
			select {
			case jobs <- job{index: index, cand: c, bound: bound}:
				return true
			case <-ctx.Done():
				return false
			}
		})
		if stopped {
			e.mu.Lock()
			reached := e.best != nil && e.best.Period == lb
			e.mu.Unlock()
			return reached
		}
	}
	return true
}

// maxCounted bounds the count of candidates shown in progress: counting
// is cheap next to solving, but not free.
const maxCounted = 1_000_000

// countCandidates is the number of candidates with N_R ≤ maxNR, or 0 when
// there are more than maxCounted.
func countCandidates(ctx context.Context, p *placement.Placement, maxNR int) int {
	n := 0
	for nr := 1; nr <= maxNR; nr++ {
		if !Enumerate(ctx, p, nr, func(Assignment) bool { n++; return n <= maxCounted }) {
			return 0
		}
	}
	return n
}

// periodLowerBound is max_d load_d and, with channels, the busiest link's
// load per micro-batch (rules.LowerBounds).
func periodLowerBound(p *placement.Placement) int {
	if !links.Queued(p) {
		return p.MaxLoad()
	}
	return rules.LowerBounds(spec.New(p, 0)).Period
}

// upperPeriod is a period every placement reaches with one micro-batch at
// a time when memory allows: all blocks in sequence, each waiting for
// every transfer (no simple cycle of the period's constraints weighs
// more).
func upperPeriod(p *placement.Placement) int {
	t := 0
	for _, b := range p.Blocks {
		t += b.Time
	}
	for _, d := range p.Deps {
		t += p.Transfer(d)
	}
	return max(t, p.MaxLoad())
}

// nrEffort caps each check that tries a smaller N_R at a period already
// reached (z3.SolverOptions.Effort).
const nrEffort = 2_000_000

// searchJoint checks P = lower bound, lower bound + 1, … with the offsets
// as variables, and for the first P that works, the least N_R.
func searchJoint(ctx context.Context, sp spec.Spec, opt Options) (*Result, error) {
	p := sp.Placement
	lb := periodLowerBound(p)
	res := &Result{LowerBound: lb, MaxNR: opt.MaxNR, Strategy: StrategyJoint}
	if opt.Incumbent != nil {
		return searchJointDown(ctx, sp, opt, res)
	}
	refuted := true // every period below the current one is impossible
	for P := lb; P <= upperPeriod(p); P++ {
		r, err := jointAt(ctx, sp, P, opt, res)
		if errors.Is(err, z3.ErrEffort) {
			refuted = false
			continue
		}
		if err != nil {
			if interrupted(err) {
				return res, nil
			}
			return res, err
		}
		if r != nil {
			res.Best = r
			res.Proven = refuted
			return res, nil
		}
	}
	res.Proven = ctx.Err() == nil && refuted
	return res, nil
}

// searchJointDown checks P = incumbent − 1, − 2, … down to the lower
// bound, each with the offsets as variables, until a period has no
// repetend (proven: the last one found is least) or a check runs out of
// effort (not proven). The least N_R is sought only at the last period
// found.
func searchJointDown(ctx context.Context, sp spec.Spec, opt Options, res *Result) (*Result, error) {
	res.Best = opt.Incumbent
	if opt.Incumbent.Period <= res.LowerBound {
		res.Proven = true
		return res, nil
	}
	found := false
	for P := opt.Incumbent.Period - 1; P >= res.LowerBound; P-- {
		r, err := jointAtNR(ctx, sp, P, opt, res, false)
		if errors.Is(err, z3.ErrEffort) {
			break
		}
		if err != nil {
			if interrupted(err) {
				break
			}
			return res, err
		}
		if r == nil {
			res.Proven = true
			break
		}
		res.Best, found = r, true
		if P == res.LowerBound {
			res.Proven = true
		}
		if opt.Progress != nil {
			opt.Progress(Progress{Method: StrategyJoint, NR: opt.MaxNR, Stats: res.Stats, BestPeriod: P, LowerBound: res.LowerBound})
		}
	}
	if found && ctx.Err() == nil {
		// The least N_R at the period reached; a capped effort, as in
		// jointAt.
		if r, err := jointAtNR(ctx, sp, res.Best.Period, opt, res, true); err == nil && r != nil && r.NR <= res.Best.NR {
			res.Best = r
		} else if err != nil && !interrupted(err) && !errors.Is(err, z3.ErrEffort) {
			return res, err
		}
	}
	return res, nil
}

// jointAt finds, for one period, the accepted offsets of least N_R.
func jointAt(ctx context.Context, sp spec.Spec, P int, opt Options, res *Result) (*Repetend, error) {
	return jointAtNR(ctx, sp, P, opt, res, true)
}

// jointAtNR finds, for one period, accepted offsets; of least N_R when
// leastNR is set.
func jointAtNR(ctx context.Context, sp spec.Spec, P int, opt Options, res *Result, leastNR bool) (*Repetend, error) {
	j, err := encode.NewJoint(sp, P, encode.RepetendOptions{MaxNR: opt.MaxNR, Seed: opt.Seed, Effort: opt.effort()})
	if err != nil {
		return nil, err
	}
	defer j.Close()
	for {
		if opt.Progress != nil {
			opt.Progress(Progress{Method: StrategyJoint, NR: opt.MaxNR, Stats: res.Stats, LowerBound: res.LowerBound})
		}
		res.Stats.Checks++
		it, err := j.Next(ctx, opt.MaxNR)
		if errors.Is(err, z3.ErrEffort) && res.Stats.Rejected > 0 {
			// Offsets were excluded at this period: what is left is
			// unknown, not refuted.
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		if it == nil {
			return nil, nil
		}
		offs, starts := it.Offsets, it.Starts
		res.Stats.Seen++
		// Least N_R at this period: walk down while still satisfiable. A
		// smaller N_R only shortens warmup and cooldown, so proving that
		// none exists gets a capped, deterministic effort.
		nr := maxOffset(offs) + 1
		j.SetEffort(nrEffort)
		for leastNR && nr > 1 {
			res.Stats.Checks++
			it2, err := j.Next(ctx, nr-1)
			if errors.Is(err, z3.ErrEffort) {
				break
			}
			if err != nil {
				return nil, err
			}
			if it2 == nil {
				break
			}
			offs, starts = it2.Offsets, it2.Starts
			nr = maxOffset(offs) + 1
		}
		j.SetEffort(opt.effort())
		res.Stats.Solved++
		ok, err := opt.Accept(ctx, nr, offs)
		if err != nil {
			return nil, err
		}
		if ok {
			return &Repetend{NR: nr, Offsets: offs, Period: P, Starts: starts}, nil
		}
		res.Stats.Rejected++
		j.Exclude(offs)
	}
}

func maxOffset(offs []int) int {
	m := 0
	for _, o := range offs {
		m = max(m, o)
	}
	return m
}

// searchRace runs both methods and keeps the first proven answer; the
// other is cancelled. Which one wins may vary from run to run; both give
// the same least period.
func searchRace(ctx context.Context, sp spec.Spec, opt Options) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type out struct {
		r   *Result
		err error
	}
	ch := make(chan out, 2)
	var pan safego.Panic
	defer pan.Repanic()
	run := func(f func(context.Context, spec.Spec, Options) (*Result, error)) {
		var o out
		defer func() { ch <- o }() // after a panic too: the waiting loop gets two answers
		defer pan.Recover()
		o.r, o.err = f(ctx, sp, opt)
	}
	go run(searchEnumerate)
	go run(searchJoint)
	var first out
	for k := 0; k < 2; k++ {
		o := <-ch
		if o.err == nil && o.r != nil && o.r.Proven {
			cancel()
			if k == 0 {
				<-ch // let the loser finish before its contexts are gone
			}
			return o.r, nil
		}
		if k == 0 {
			first = o
		} else if first.err != nil {
			return o.r, o.err
		} else if first.r != nil && (o.r == nil || o.r.Best == nil || (first.r.Best != nil && first.r.Best.Period <= o.r.Best.Period)) {
			return first.r, nil
		}
		if k == 1 {
			return o.r, o.err
		}
	}
	return nil, errors.New("repetend: race ended without an answer")
}
