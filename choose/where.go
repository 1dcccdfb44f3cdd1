package choose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/rule/latency"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/pairs"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// # Where, not only when
//
// A placement whose blocks give candidates (placement's "Where as a
// decision"; She et al., "Automatic Operator-level Parallelism Planning for
// Distributed Deep Learning – A Mixed-Integer Programming Approach", §III)
// leaves the assignment of blocks to devices to the search. Run and
// Optimal then search assignments: they start from a list of assignments
// (Assignment; the built-in ones of AssignmentStarts and any the caller
// adds with Options.Assignments), search each as a pinned placement, and
// enumerate every assignment where there are few enough, skipping those
// whose lower bound cannot beat the best schedule so far. The answer is
// never worse than any start's, and its schedule's placement is the chosen
// one (placement.Choose): the schedule file records the choice.

// Assignment is a choice of devices for every block of a placement with
// candidates: Choice[i] is the index of block i's group among its options
// (placement's Options; 0 for a pinned block).
type Assignment struct {
	Name   string
	Choice []int
}

// Objective is what the search minimises.
type Objective int

const (
	// ObjectiveMakespan is the makespan of the N micro-batches (the
	// default).
	ObjectiveMakespan Objective = iota
	// ObjectivePeriod is the period of the steady state (throughput): the
	// least repetend period found, then the makespan.
	ObjectivePeriod
)

// ParseObjective reads "makespan" or "period".
func ParseObjective(s string) (Objective, error) {
	switch s {
	case "makespan", "":
		return ObjectiveMakespan, nil
	case "period":
		return ObjectivePeriod, nil
	}
	return 0, fmt.Errorf("objective %q (want makespan or period)", s)
}

func (o Objective) String() string {
	if o == ObjectivePeriod {
		return "period"
	}
	return "makespan"
}

// DefaultAssignments is how many assignments Run enumerates, each searched,
// when a placement has no more (Options.MaxAssignments).
const DefaultAssignments = 64

// MaxAssignedInstances is the most instances (blocks times micro-batches)
// for which Run gives the solver with assignment literals
// (encode.MinimizeAssigned) a try.
const MaxAssignedInstances = 96

// DefaultOptimalAssignments is how many Optimal enumerates
// (OptimalOptions.MaxAssignments); it refuses a placement with more.
const DefaultOptimalAssignments = 4096

// AssignmentStarts are the built-in assignments the search starts from,
// in this order, duplicates left out: the choice a chosen placement
// records ("given"); the max-load contiguous partition of partition's DP
// ("partition"), where the DP applies; every block on device d ("all on
// d"); and round robin by topological level ("round robin"). A block goes
// to the candidate that is exactly the device it is sent to, else to the
// first that holds it, else to its first candidate.
func AssignmentStarts(ctx context.Context, p *placement.Placement) []Assignment {
	var out []Assignment
	add := func(name string, choice []int) {
		for _, a := range out {
			if slices.Equal(a.Choice, choice) {
				return
			}
		}
		out = append(out, Assignment{Name: name, Choice: choice})
	}
	if !p.Open() && p.HasCandidates() {
		add("given", p.Choice())
	}
	if dev, ok := partitionDevices(ctx, p); ok {
		add("partition", onDevices(p, dev))
	}
	for d := range p.Devices {
		dev := make([]int, p.K())
		for i := range dev {
			dev[i] = d
		}
		add("all on "+strconv.Itoa(d), onDevices(p, dev))
	}
	level := levels(p)
	dev := make([]int, p.K())
	for i := range dev {
		dev[i] = level[i] % p.Devices
	}
	add("round robin", onDevices(p, dev))
	return out
}

// onDevices is the choice that sends block i to device dev[i] as well as
// its candidates allow (see AssignmentStarts).
func onDevices(p *placement.Placement, dev []int) []int {
	choice := make([]int, p.K())
	for i := range choice {
		opts := p.DeviceOptions(i)
		if o := slices.IndexFunc(opts, func(g []int) bool { return len(g) == 1 && g[0] == dev[i] }); o >= 0 {
			choice[i] = o
		} else if o := slices.IndexFunc(opts, func(g []int) bool { return slices.Contains(g, dev[i]) }); o >= 0 {
			choice[i] = o
		}
	}
	return choice
}

// levels is every block's topological level: 0 for a block without
// predecessors, else one more than its predecessors' largest.
func levels(p *placement.Placement) []int {
	order, _ := p.Topo()
	preds := p.Preds()
	out := make([]int, p.K())
	for _, i := range order {
		for _, j := range preds[i] {
			out[i] = max(out[i], out[j]+1)
		}
	}
	return out
}

// partitionDevices is the device of every block under partition's
// max-load contiguous split (partition.Contiguous) of the placement's
// graph: blocks as nodes with their times, gradient blocks with the
// forward block they differentiate. ok is false where the DP does not
// apply or fails (too many ideals, a graph it cannot split).
func partitionDevices(ctx context.Context, p *placement.Placement) (dev []int, ok bool) {
	g := &partition.Graph{Name: p.Name, Accelerators: p.Devices}
	pairs := pinnedPairs(p)
	for i, b := range p.Blocks {
		info, _ := b.Kind.Info()
		g.Nodes = append(g.Nodes, partition.Node{Name: b.ID, Acc: float64(b.Time), Backward: info.Gradient, Class: pairs[i]})
	}
	for _, d := range p.Deps {
		g.Edges = append(g.Edges, [2]int{d.From, d.To})
	}
	if g.Validate() != nil {
		return nil, false
	}
	res, err := partition.Contiguous(ctx, g, partition.DPOptions{Workers: 1})
	if err != nil || res.Split == nil {
		return nil, false
	}
	for _, d := range res.Split.Device {
		if d < 0 || d >= p.Devices {
			return nil, false
		}
	}
	return res.Split.Device, true
}

// pinnedPairs is a colour class for every block: a gradient block shares
// the class of the forward block it differentiates (the forward block's
// index), every other block has a class of its own (-1). Pairs is asked
// with every block on one device, so that it pairs by the graph alone.
func pinnedPairs(p *placement.Placement) []int {
	q := p.Clone()
	for i := range q.Blocks {
		q.Blocks[i].Devices = []int{0}
	}
	pair := q.Pairs()
	class := make([]int, p.K())
	for i := range class {
		class[i] = -1
	}
	for i, f := range pair {
		if f >= 0 {
			class[i], class[f] = f, f
		}
	}
	return class
}

// assignmentsOf is the starts the search takes, the caller's first, then
// the built-in ones, duplicates left out, each checked against p.
func assignmentsOf(ctx context.Context, p *placement.Placement, given []Assignment) ([]Assignment, error) {
	var out []Assignment
	for _, a := range append(slices.Clone(given), AssignmentStarts(ctx, p)...) {
		if _, err := placement.Choose(p.Reopen(), a.Choice); err != nil {
			return nil, fmt.Errorf("search: assignment %q: %w", a.Name, err)
		}
		if !slices.ContainsFunc(out, func(b Assignment) bool { return slices.Equal(a.Choice, b.Choice) }) {
			out = append(out, a)
		}
	}
	return out, nil
}

// every calls f with every choice of p in order (block 0 varies
// fastest) until f returns false.
func every(p *placement.Placement, f func(choice []int) bool) {
	choice := make([]int, p.K())
	for {
		if !f(slices.Clone(choice)) {
			return
		}
		i := 0
		for ; i < p.K(); i++ {
			choice[i]++
			if choice[i] < len(p.DeviceOptions(i)) {
				break
			}
			choice[i] = 0
		}
		if i == p.K() {
			return
		}
	}
}

// score is what the objective compares: the period (0 where no repetend
// was found, then counted as the makespan) and the makespan.
type score struct{ period, makespan int }

func (a score) less(b score, o Objective) bool {
	if o == ObjectivePeriod && a.period != b.period {
		return a.period < b.period
	}
	return a.makespan < b.makespan
}

func periodOf(r *search.Result) int {
	if r.Repetend != nil {
		return r.Repetend.Period
	}
	if rp := schedule.FindRepetend(r.Schedule); rp != nil {
		return rp.Period
	}
	return schedule.Makespan(r.Schedule)
}

// devices is Devices of a placement with candidates (see "Where, not
// only when"): every start searched as a pinned placement, then the
// solvers with assignment literals where they apply, then every other
// assignment whose lower bound may beat the best, when there are at most
// opt.MaxAssignments (DefaultAssignments); with time to use, the best
// choice is then given the time. The result's schedule is on the chosen
// placement; its Contenders list each assignment searched with its
// makespan, under the name "assignment <name>".
func devices(ctx context.Context, sp spec.Spec, opt Options) (*search.Result, error) {
	p := sp.Placement
	t0 := time.Now()
	starts, err := assignmentsOf(ctx, p, opt.Assignments)
	if err != nil {
		return nil, err
	}
	c := &chooser{sp: sp, opt: opt, open: p.Reopen(), inner: opt.Search, seen: map[string]bool{}, results: map[string]*search.Result{}}
	c.inner.Start = nil // schedules of one choice only
	// Each choice is searched at the default effort; the time left goes
	// to the best one at the end (a choice searched with the time would
	// keep it all).
	c.inner.UseTime = false
	for _, a := range starts {
		if err := c.try(ctx, a.Name, a.Choice); err != nil {
			c.errs = append(c.errs, err.Error())
		}
		if ctx.Err() != nil {
			break
		}
	}
	limit := opt.MaxAssignments
	if limit == 0 {
		limit = DefaultAssignments
	}
	periodSolved, err := c.periodSolver(ctx)
	if err != nil {
		return nil, err
	}
	solved, err := c.assignedSolver(ctx)
	if err != nil {
		return nil, err
	}
	enumerated := solved
	if n := c.open.Assignments(limit); !solved && !periodSolved && limit > 0 && n <= limit && ctx.Err() == nil {
		enumerated = true
		every(c.open, func(choice []int) bool {
			_ = c.try(ctx, "", choice)
			return ctx.Err() == nil
		})
	}
	best := c.best
	if best == nil {
		return nil, fmt.Errorf("search: no assignment of placement %q gives a schedule: %s", p.Name, strings.Join(c.errs, "; "))
	}
	if opt.Search.UseTime && ctx.Err() == nil && !best.Settled() {
		more := c.inner
		more.UseTime = true
		more.Start = []search.Start{{Name: "the best choice of devices", Schedule: best.Schedule}}
		if r, err := search.Run(ctx, best.Schedule.Spec, more); err == nil && r.Makespan() < best.Makespan() {
			best.Schedule, best.Source, best.Refined = r.Schedule, r.Source, r.Refined
		}
	}
	best.Contenders = append(c.tried, best.Contenders...)
	best.Assigned = true
	best.AssignedPeriod = periodSolved
	best.Times.Total = time.Since(t0) // every search, not the chosen one's alone
	// The bounds hold for every assignment: the relaxation's, raised to
	// the least bound of those searched when every one was, each of the
	// others bounded by the best makespan (it was skipped for that).
	best.Bounds = relaxedBounds(c.open, sp.MicroBatches)
	if enumerated && ctx.Err() == nil {
		best.Bounds.Makespan = max(best.Bounds.Makespan, min(c.leastBound, best.Makespan()))
	}
	return best, nil
}

// chooser is the state of devices: the problem and options, the
// placement with every choice open, the options of each choice's
// search, and the best choice so far.
type chooser struct {
	sp    spec.Spec
	opt   Options
	open  *placement.Placement
	inner search.Options
	best  *search.Result
	score score
	tried []search.Contender
	errs  []string
	// leastBound is the least makespan bound of the assignments searched.
	leastBound int
	seen       map[string]bool
	results    map[string]*search.Result // each choice's search, where it gave a schedule
}

// offer makes r the best where it scores better.
func (c *chooser) offer(r *search.Result) {
	if sc := (score{periodOf(r), r.Makespan()}); c.best == nil || sc.less(c.score, c.opt.Objective) {
		c.best, c.score = r, sc
	}
}

// try searches choice (named name; "" for an enumerated one), unless it
// was searched, its lower bound cannot beat the best, or no construction
// or baseline fits it.
func (c *chooser) try(ctx context.Context, name string, choice []int) error {
	sp := c.sp
	key := fmt.Sprint(choice)
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	q, err := placement.Choose(c.open, choice)
	if err != nil {
		return err
	}
	if c.best != nil && name == "" {
		lb := rules.LowerBounds(spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory}).Makespan
		if c.opt.Objective == ObjectivePeriod {
			if q.MaxLoad() > c.score.period || q.MaxLoad() == c.score.period && lb >= c.score.makespan {
				return nil
			}
		} else if lb >= c.score.makespan {
			return nil
		}
	}
	if !seedable(ctx, q, sp) {
		// No construction or baseline fits the budget: the search
		// would only look for a repetend, which can take long to
		// find none; the solver with assignment literals still
		// covers this choice.
		if name != "" && name != periodSolverName {
			c.errs = append(c.errs, fmt.Sprintf("assignment %q: no construction or baseline fits the budget", name))
		}
		return nil
	}
	r, err := search.Run(ctx, onPlacement(sp, q), c.inner)
	if err == nil {
		b := rules.LowerBounds(spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory}).Makespan
		if c.leastBound == 0 || b < c.leastBound {
			c.leastBound = b
		}
	}
	if err != nil {
		if name == "" || ctx.Err() != nil {
			return nil // an enumerated assignment that fits no budget, or the end of time
		}
		return fmt.Errorf("assignment %q: %w", name, err)
	}
	c.results[key] = r
	if name != "" {
		c.tried = append(c.tried, search.Contender{Source: search.Source{Kind: search.SourceStart, Name: "assignment " + name}, Makespan: r.Makespan()})
	}
	c.offer(r)
	return nil
}

// periodSolver is the repetend with assignment literals
// (repetend.SearchAssigned): the choice whose steady state has the least
// period, found by the solver, searched as a pinned placement. For the
// period it is the answer, or the proof that no choice beats the best
// start's (solved); for the makespan it is one more start, worth its
// solver calls only where a steady state can matter (more than one
// micro-batch) and no start already meets the bound over every
// assignment.
func (c *chooser) periodSolver(ctx context.Context) (solved bool, err error) {
	sp, opt := c.sp, c.opt
	asStart := sp.MicroBatches > 1 && (c.best == nil || c.score.makespan > relaxedBounds(c.open, sp.MicroBatches).Makespan)
	if !periodSolvable(c.open, sp) || (opt.Objective != ObjectivePeriod && !asStart) || ctx.Err() != nil {
		return false, nil
	}
	var exclude [][]int
	excludedProven := true // every excluded choice's own least period is known
	for round := 0; round < maxPeriodRounds && ctx.Err() == nil; round++ {
		upper := 0
		if opt.Objective == ObjectivePeriod && c.best != nil {
			upper = c.score.period
		}
		sol, err := repetend.SearchAssigned(ctx, spec.Spec{Placement: c.open, Memory: sp.Memory, MicroBatches: sp.MicroBatches}, repetend.AssignedOptions{MaxNR: opt.Search.MaxNR, Upper: upper, Exclude: exclude, Seed: opt.Search.Seed, Effort: opt.Search.Effort})
		if err != nil {
			if ctx.Err() == nil {
				return false, err
			}
			break
		}
		if sol.Choice != nil {
			if err := c.try(ctx, periodSolverName, sol.Choice); err != nil {
				c.errs = append(c.errs, err.Error())
			}
		}
		if opt.Objective == ObjectivePeriod && sol.Proven && excludedProven && c.best != nil && c.best.Repetend != nil && c.best.Repetend.Period <= sol.LowerBound {
			// No choice has a shorter period (N_R ≤ MaxNR): the
			// best is the answer, with no enumeration.
			return true, nil
		}
		if sol.Choice == nil || opt.Objective != ObjectivePeriod {
			break
		}
		// The search of the solver's choice did not reach its period
		// (no warmup and cooldown under the budget for its
		// repetends): ask again without that choice.
		r := c.results[fmt.Sprint(sol.Choice)]
		if r == nil || !r.PeriodProven() {
			excludedProven = false
		}
		exclude = append(exclude, sol.Choice)
	}
	return false, nil
}

// assignedSolver is the solver with assignment literals
// (encode.MinimizeAssigned), for the makespan, each call capped: a
// choice and schedule better than every start's, searched again as a
// start of the search on that choice; or the proof that none is better
// (solved, the least bound then its lower bound).
func (c *chooser) assignedSolver(ctx context.Context) (solved bool, err error) {
	sp, opt, open := c.sp, c.opt, c.open
	if opt.Objective != ObjectiveMakespan || rules.Unhandled(sp, assignedRules()...) != nil ||
		open.K()*sp.MicroBatches > MaxAssignedInstances || ctx.Err() != nil {
		return false, nil
	}
	effort := opt.Search.Effort
	if effort == 0 {
		effort = repetend.DefaultEffort
	}
	upper := 0
	if c.best != nil {
		upper = c.score.makespan
	}
	sol, err := encode.MinimizeAssigned(ctx, spec.Spec{Placement: open, MicroBatches: sp.MicroBatches, Memory: sp.Memory}, encode.AssignedOptions{
		Upper: upper, Lower: relaxedBounds(open, sp.MicroBatches).Makespan, Options: smt.Options{Seed: opt.Search.Seed, Effort: max(effort, 0)}})
	if err == nil && sol.Choice != nil {
		q, err := placement.Choose(open, sol.Choice)
		if err != nil {
			return false, err
		}
		s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory}, Instances: sol.Instances}
		if err := verify.Schedule(s); err != nil {
			return false, fmt.Errorf("search: the solver's choice of devices fails verification (a bug): %w", err)
		}
		solverOpt := c.inner
		solverOpt.Start = []search.Start{{Name: "solver with assignment literals", Schedule: s}}
		if r, err := search.Run(ctx, onPlacement(sp, q), solverOpt); err == nil {
			c.tried = append(c.tried, search.Contender{Source: search.Source{Kind: search.SourceStart, Name: "assignment solver"}, Makespan: r.Makespan()})
			c.offer(r)
			c.seen[fmt.Sprint(sol.Choice)] = true
		}
	}
	if err == nil && sol.Proven {
		c.leastBound = sol.LowerBound
		return true, nil
	}
	return false, nil
}

// onPlacement is sp on placement q (a choice of devices of sp's).
func onPlacement(sp spec.Spec, q *placement.Placement) spec.Spec {
	sp.Placement = q
	return sp
}

// periodSolverName is the name of the start the repetend with assignment
// literals gives ("assignment period solver").
const periodSolverName = "period solver"

// maxPeriodRounds is how many times Run asks the repetend with
// assignment literals for a choice, each time without the choices before
// whose own search did not reach the period the solver found.
const maxPeriodRounds = 8

// MaxPeriodAssignedBlocks is the most blocks for which Run gives the
// repetend with assignment literals (repetend.SearchAssigned) a try.
const MaxPeriodAssignedBlocks = 48

// periodSolvable reports whether Run gives the repetend with assignment
// literals a try: a placement with candidates of at most
// MaxPeriodAssignedBlocks blocks, without links as resources, latency
// budget, offload or recompute (the encoding has none of them).
func periodSolvable(open *placement.Placement, sp spec.Spec) bool {
	return open.HasCandidates() && rules.Unhandled(sp, periodAssignedRules()...) == nil && open.K() <= MaxPeriodAssignedBlocks
}

// assignedRules are the rules the solver with assignment literals
// (encode.MinimizeAssigned) is run with: it leaves out links that carry
// one transfer at a time and the decisions (rules.Unhandled names the
// first of those a spec switches on).
func assignedRules() []rule.Rule {
	return []rule.Rule{pairs.Rule{}, memory.Rule{}, latency.Rule{}, fsdp.Rule{}}
}

// periodAssignedRules are those of the repetend with assignment literals
// (repetend.SearchAssigned): assignedRules but the latency budget.
func periodAssignedRules() []rule.Rule {
	return []rule.Rule{pairs.Rule{}, memory.Rule{}, fsdp.Rule{}}
}

// relaxedBounds are lower bounds of the period and the makespan of n
// micro-batches that hold for every assignment of p: the least work of
// every block (its least time times its group's size, over its options)
// spread over all devices, and the longest path with every block at its
// least time and no transfers.
func relaxedBounds(p *placement.Placement, n int) bound.Bounds {
	work := 0
	least := make([]int, p.K())
	for i := range p.Blocks {
		w := 0
		for o, g := range p.DeviceOptions(i) {
			t := p.OptionTime(i, o)
			if o == 0 || t < least[i] {
				least[i] = t
			}
			if o == 0 || t*len(g) < w {
				w = t * len(g)
			}
		}
		work += w
	}
	order, _ := p.Topo()
	preds := p.Preds()
	head := make([]int, p.K())
	cp := 0
	for _, i := range order {
		for _, j := range preds[i] {
			head[i] = max(head[i], head[j]+least[j])
		}
		cp = max(cp, head[i]+least[i])
	}
	ceil := func(a, b int) int { return (a + b - 1) / b }
	return bound.Bounds{Period: ceil(work, p.Devices), Makespan: max(cp, ceil(n*work, p.Devices))}
}

// seedable reports whether a construction or a baseline gives q a
// schedule under the options' budget.
func seedable(ctx context.Context, q *placement.Placement, sp spec.Spec) bool {
	cands, err := construct.Portfolio(ctx, spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory, Allowed: sp.Allowed})
	if err == nil && len(cands) > 0 {
		return true
	}
	for _, m := range baseline.All() {
		if s, err := m.Build(spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory}); err == nil && sp.Allowed.Permit(s.Count()) {
			return true
		}
	}
	return false
}

// optimalDevices is OptimalDevices of a placement with candidates: the time-optimal
// search of every assignment (at most opt.MaxAssignments,
// DefaultOptimalAssignments when 0), starts first, each skipped when its
// lower bound cannot beat the best so far. Its answer is optimal over
// assignments and schedules where every search it ran is proven; the
// bound is the least lower bound of the assignments not beaten.
func optimalDevices(ctx context.Context, sp spec.Spec, opt OptimalOptions) (*search.OptimalResult, error) {
	p := sp.Placement
	open := p.Reopen()
	limit := opt.MaxAssignments
	if limit == 0 {
		limit = DefaultOptimalAssignments
	}
	if n := open.Assignments(limit); n > limit {
		return nil, fmt.Errorf("search: placement %q has more than %d assignments of its candidates: too many for the time-optimal search (use tessel search)", p.Name, limit)
	}
	starts, err := assignmentsOf(ctx, p, opt.Assignments)
	if err != nil {
		return nil, err
	}
	inner := opt.Search
	var best *search.OptimalResult
	checks := 0 // solver calls, all searches together
	lower := 0  // least lower bound over the assignments that may still be optimal
	seen := map[string]bool{}
	try := func(choice []int) {
		key := fmt.Sprint(choice)
		if seen[key] {
			return
		}
		seen[key] = true
		q, err := placement.Choose(open, choice)
		if err != nil {
			return
		}
		lb := rules.LowerBounds(spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory}).Makespan
		if best != nil && lb >= schedule.Makespan(best.Schedule) {
			return
		}
		r, err := search.Optimal(ctx, onPlacement(sp, q), inner)
		if err != nil {
			return // no schedule of this assignment fits the budget
		}
		checks += r.Solution.Checks
		if !r.Solution.Proven {
			if lower == 0 || r.Bound.Makespan < lower {
				lower = r.Bound.Makespan
			}
		}
		if best == nil || schedule.Makespan(r.Schedule) < schedule.Makespan(best.Schedule) {
			best = r
		}
	}
	for _, a := range starts {
		try(a.Choice)
	}
	solved := false
	if rules.Unhandled(sp, assignedRules()...) == nil && ctx.Err() == nil {
		// The solver with assignment literals (encode.MinimizeAssigned):
		// a better choice and schedule than every start, or the proof
		// that none exists.
		upper := 0
		if best != nil {
			upper = schedule.Makespan(best.Schedule)
		}
		lb := relaxedBounds(open, sp.MicroBatches).Makespan
		sol, err := encode.MinimizeAssigned(ctx, spec.Spec{Placement: open, MicroBatches: sp.MicroBatches, Memory: sp.Memory}, encode.AssignedOptions{Upper: upper, Lower: lb,
			Options: smt.Options{Seed: opt.Search.Seed, Effort: opt.Search.Effort, Progress: opt.Search.Progress}})
		if err == nil {
			checks += sol.Checks
		}
		if err == nil && sol.Choice != nil {
			q, err := placement.Choose(open, sol.Choice)
			if err != nil {
				return nil, err
			}
			s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory}, Instances: sol.Instances}
			if err := verify.Schedule(s); err != nil {
				return nil, fmt.Errorf("search: the solver's choice of devices fails verification (a bug): %w", err)
			}
			b := rules.LowerBounds(onPlacement(sp, q))
			lower := search.OptimalBound{Makespan: b.Makespan, By: b.By.String(), Relaxed: b.Makespan}
			best = &search.OptimalResult{Schedule: s, Source: search.Source{Kind: search.SourceSolver}, Bound: lower,
				Solution: &smt.Solution{Makespan: sol.Makespan, LowerBound: sol.LowerBound, Checks: sol.Checks}}
		}
		if err == nil && sol.Proven {
			solved = true
		} else if err != nil && !errors.Is(err, smt.ErrInfeasible) && ctx.Err() == nil {
			return nil, err
		}
	}
	if !solved {
		every(open, func(choice []int) bool {
			try(choice)
			return ctx.Err() == nil
		})
	}
	if best == nil {
		return nil, fmt.Errorf("search: no assignment of placement %q gives a schedule under memory %d", p.Name, sp.Memory)
	}
	ms := schedule.Makespan(best.Schedule)
	out := *best
	sol := *best.Solution
	sol.Makespan, sol.Checks = ms, checks
	switch {
	case solved:
		out.Bound = search.OptimalBound{Makespan: ms, By: "solver calls with the devices as decisions", Solver: true, Relaxed: best.Bound.Relaxed}
	case ctx.Err() != nil:
		// Assignments were left out: only the least bound of all of
		// them holds.
		lower = ms
		every(open, func(choice []int) bool {
			if q, err := placement.Choose(open, choice); err == nil {
				lower = min(lower, rules.LowerBounds(spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory}).Makespan)
			}
			return true
		})
		out.Bound = search.OptimalBound{Makespan: lower, By: "the least lower bound of every assignment (the search was stopped)", Relaxed: lower}
	case lower == 0 || lower >= ms:
		out.Bound = search.OptimalBound{Makespan: ms, By: "every assignment searched", Solver: true, Relaxed: best.Bound.Relaxed}
	default:
		out.Bound = search.OptimalBound{Makespan: lower, By: "every assignment searched, some not proven", Relaxed: best.Bound.Relaxed}
	}
	sol.Proven = out.Bound.Makespan >= ms
	sol.LowerBound = out.Bound.Makespan
	out.Solution = &sol
	return &out, nil
}
