package encode

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// The repetend of a placement (the Tessel paper's §IV; package repetend
// searches it): iteration k runs block i of micro-batch n_i + k at
// s_i + k·P. This file encodes it with the offsets n_i given and the
// period P a variable (Periodic); joint.go with the offsets as variables
// at a fixed period (Joint); repetend_assigned.go with the devices as
// decisions (AssignedAt); repetend_decided.go with each activation's
// keep, offload or recompute as decisions (DecidedAt). The answers are
// plain values (Iteration) that package repetend turns into its own.

// RepetendOptions configure the encodings of a repetend: effort and
// seed, and for the encodings with the offsets as variables the largest
// N_R and choices to leave out.
type RepetendOptions struct {
	// MaxNR is the largest N_R: every offset lies in 0..MaxNR−1 (Joint,
	// AssignedAt, DecidedAt).
	MaxNR int
	// Exclude lists choices of devices (placement.Choose) the answer of
	// AssignedAt must differ from.
	Exclude [][]int
	Seed    int
	// Effort caps every solver call (z3.SolverOptions.Effort): 0 means
	// no cap; callers resolve their defaults first.
	Effort int
}

// Iteration is one iteration of a solved repetend: every block's offset,
// the period, and every block's start, the earliest at 0.
type Iteration struct {
	Offsets []int
	Period  int
	Starts  []int
}

// Steady is the placement's link rule in a repetend's steady state. With
// channels (rule/links) the encoding of a repetend asks that no
// transfer waits for its link: every block's transfers leave as it ends
// (those of one block on one link one after another, in the rule's
// order), and the transfers of one link never overlap, within an
// iteration nor across iterations (assertLinkWindows). The rule then
// keeps every transfer where the encoding put it, so the steady state is
// exact; a repetend whose transfers would have to wait is not searched —
// a restriction: with channels, a proven period is the least among
// repetends without waiting transfers. The warmup and cooldown are the
// search's, which compacts the assembled schedule (compact.Compact
// applies the rule to all of it). Without channels, Delay is the
// placement's Delay and Spans is empty: the encoding is the one without
// links.
type Steady struct {
	Delay map[placement.Dep]int // least start-to-start of B_i^n → B_j^n
	Spans []LinkSpan
}

// LinkSpan is the time a block's tensor occupies one link, relative to
// the block's start.
type LinkSpan struct {
	Block    int
	Link     placement.Link
	From, To int
}

// SteadyLinks reads the rule (placement's LinkQueue) for every block
// alone, with its links free as it starts: when each of its tensors
// arrives, and when each occupies each link.
func SteadyLinks(p *placement.Placement) Steady {
	st := Steady{Delay: make(map[placement.Dep]int, len(p.Deps))}
	if !links.Queued(p) {
		for _, d := range p.Deps {
			st.Delay[d] = p.Delay(d)
		}
		return st
	}
	for i, succs := range p.SuccDeps() {
		q := p.NewLinkQueue()
		for _, d := range succs {
			at, _, _ := q.Arrival(d, 0)
			st.Delay[d] = at
			if p.Lanes[d] != nil {
				continue // a pair of several links: no queue in the encoding (DepTransfers)
			}
			for _, l := range p.Links(d) {
				st.Spans = append(st.Spans, LinkSpan{Block: i, Link: l, From: q.Free(l) - p.Transfer(d), To: q.Free(l)})
			}
		}
	}
	return st
}

// prec is dependency d's precedence in the steady state, with periods·P
// of slack: s_i + delay ≤ s_j + periods·P (smt's instance rule without channels).
func (st Steady) prec(p *placement.Placement, d placement.Dep, periods int) smt.Prec {
	return smt.Prec{From: d.From, To: d.To, Lag: p.Blocks[d.From].Time - st.Delay[d], Periods: periods}
}

// assertLinkWindows is deviceWindows for links: the spans of one
// iteration on a link lie in a window of length P, so that iterations
// never overlap on it, and two spans of different blocks on one link run
// in the order of their blocks on the link's first device (Encoder's
// Before), the order in which the rule takes them. Nothing without
// channels.
func assertLinkWindows(e *smt.Encoder, st Steady, period z3.Int) error {
	x := e.X
	var links []placement.Link
	on := map[placement.Link][]LinkSpan{}
	for _, sp := range st.Spans {
		if _, ok := on[sp.Link]; !ok {
			links = append(links, sp.Link)
		}
		on[sp.Link] = append(on[sp.Link], sp)
	}
	for _, l := range links {
		spans := on[l]
		w := x.IntVar(fmt.Sprintf("l%d_%d", l.From, l.To))
		for _, sp := range spans {
			e.S.Assert(x.Le(w, x.Plus(e.Start[sp.Block], sp.From)))
			e.S.Assert(x.Le(x.Plus(e.Start[sp.Block], sp.To), x.Add(w, period)))
		}
		for k, a := range spans {
			for _, b := range spans[k+1:] {
				if a.Block == b.Block {
					continue // apart by construction
				}
				lit, err := e.Before(a.Block, b.Block)
				if err != nil {
					return fmt.Errorf("repetend: link %d->%d: %w", l.From, l.To, err)
				}
				e.S.Assert(x.Implies(lit, x.Le(x.Plus(e.Start[a.Block], a.To), x.Plus(e.Start[b.Block], b.From))))
				e.S.Assert(x.Implies(x.Not(lit), x.Le(x.Plus(e.Start[b.Block], b.To), x.Plus(e.Start[a.Block], a.From))))
			}
		}
	}
	return nil
}

// repetendProblem is the repetend of one candidate as an smt.Problem: one
// task per block, dependencies with δ = n_i − n_j periods of slack (eq. 4:
// s_i + t_i + c_ij ≤ s_j + δ·P, the placement's Delay; with channels the
// steady state's delay, see Steady), and the memory budget from the entry
// memory of the iteration that starts highest (see IterationEntry).
func repetendProblem(sp spec.Spec, offsets []int, nr int) *smt.Problem {
	p := sp.Placement
	pr := &smt.Problem{Devices: p.Devices}
	if offsets != nil {
		// Per-device budgets as the one budget and shifted entries
		// (BudgetShift).
		budget, shift := BudgetShift(sp)
		pr.Memory = budget
		pr.Entry = smt.ShiftEntry(IterationEntry(sp, offsets, nr), shift)
	}
	for _, b := range p.Blocks {
		pr.Tasks = append(pr.Tasks, smt.Task{Name: b.ID, Devices: b.Devices, Time: b.Time, Memory: b.Memory})
	}
	st := SteadyLinks(p)
	for _, d := range p.Deps {
		periods := 0
		if offsets != nil {
			periods = offsets[d.From] - offsets[d.To]
		}
		pr.Precs = append(pr.Precs, st.prec(p, d, periods))
	}
	return pr
}

// SequentialIteration is the repetend that runs one micro-batch at a time
// (N_R 1, every offset 0): a list schedule of one micro-batch (smt's
// Greedy), repeated every makespan of it. nil when the placement has a
// cycle. With channels the list schedule is the one micro-batch's
// instance problem, whose transfers queue on their links by the rule
// (InstanceProblem): no iteration starts before the last one's tensors
// have arrived, so the rule keeps them as they are.
func SequentialIteration(p *placement.Placement) *Iteration {
	pr := repetendProblem(spec.New(p, 0), nil, 1)
	if links.Queued(p) {
		one := spec.New(p, 1)
		pr = InstanceProblem(one, AllInstances(one), nil)
		pr.Memory, pr.Entry = 0, nil
	}
	starts := smt.Greedy(pr)
	if starts == nil {
		return nil
	}
	return &Iteration{Offsets: make([]int, p.K()), Period: pr.Makespan(starts), Starts: normalise(starts)}
}

// deviceWindows puts every device's blocks of one iteration inside a
// window of length P (E_R^d + W_R^d ≤ P), so that consecutive iterations
// never interleave on a device, and returns every device's window start
// (nil for a device without blocks): the recomputes of a decided
// repetend go into them.
//
// Two tightenings that lose no repetend: each window starts with its
// earliest block, and device 0's window starts at 0 (every start may be
// shifted by the same amount). They make the joint search's checks
// several times faster.
func deviceWindows(e *smt.Encoder, p *placement.Placement, period z3.Int) []*z3.Int {
	x := e.X
	out := make([]*z3.Int, p.Devices)
	first := true
	for d, on := range p.DeviceBlocks() {
		if len(on) == 0 {
			continue
		}
		w := x.IntVar(fmt.Sprintf("w%d", d))
		var eq []z3.Bool
		for _, i := range on {
			e.S.Assert(x.Le(w, e.Start[i]))
			e.S.Assert(x.Le(x.Plus(e.Start[i], p.Blocks[i].Time), x.Add(w, period)))
			eq = append(eq, x.Eq(w, e.Start[i]))
		}
		e.S.Assert(x.Or(eq...))
		if first {
			e.S.Assert(x.Eq(w, x.IntVal(0)))
		}
		first = false
		out[d] = &w
	}
	return out
}

// EntryMemory is the memory of every device when the repetend starts: the
// warmup has run B_i^n for every n < n_i.
func EntryMemory(p *placement.Placement, offsets []int) []int {
	entry := make([]int, p.Devices)
	for i, b := range p.Blocks {
		for _, d := range b.Devices {
			entry[d] += offsets[i] * b.Memory
		}
	}
	return entry
}

// NetMemory is the memory one micro-batch leaves on every device (0 for
// every device in training placements whose backward frees what the
// forward took).
func NetMemory(p *placement.Placement) []int {
	net := make([]int, p.Devices)
	for _, b := range p.Blocks {
		for _, d := range b.Devices {
			net[d] += b.Memory
		}
	}
	return net
}

// IterationEntry is the highest memory any iteration starts with: the
// entry memory, plus, on a device where one micro-batch leaves memory
// behind (net > 0), what the first N − N_R iterations leave. With N
// unknown (0) only the first iteration is counted.
func IterationEntry(sp spec.Spec, offsets []int, nr int) []int {
	p, microBatches := sp.Placement, sp.MicroBatches
	entry := EntryMemory(p, offsets)
	if microBatches > nr {
		for d, net := range NetMemory(p) {
			entry[d] += max(0, net) * (microBatches - nr)
		}
	}
	return entry
}

// Periodic holds the repetend of given offsets with the period P a
// variable, so that a binary search on P is incremental.
type Periodic struct {
	x      *z3.Context
	s      *z3.Solver
	e      *smt.Encoder
	period z3.Int
	checks int
	// sp is the problem: the placement, the budget, the micro-batches
	// and the latency budget asserted with each candidate's offsets.
	sp spec.Spec
	// offsets are NewPeriodic's (nil for a worker's encoding).
	offsets []int
}

// NewPeriodic encodes the repetend of offsets (N_R nr) of sp's placement
// under sp's memory and latency budgets, for sp's micro-batches.
func NewPeriodic(sp spec.Spec, nr int, offsets []int, opt RepetendOptions) (*Periodic, error) {
	p := sp.Placement
	ps, err := encodePeriodic(p, repetendProblem(sp, offsets, nr), opt.Seed, opt.Effort)
	if err != nil {
		return nil, err
	}
	ps.sp, ps.offsets = sp, offsets
	if err := ps.assertLatency(offsets); err != nil {
		ps.Close()
		return nil, err
	}
	return ps, nil
}

// NewPeriodicWorker encodes what all candidates of sp's placement share
// — starts, exclusive devices, windows, the period — once, so that a
// worker solves candidate after candidate in Push/Pop scopes (Candidate)
// instead of building a Z3 context for each.
func NewPeriodicWorker(sp spec.Spec, opt RepetendOptions) (*Periodic, error) {
	p := sp.Placement
	pr := repetendProblem(spec.New(p, 0), nil, 1)
	pr.Precs = nil // they depend on the candidate's offsets
	ps, err := encodePeriodic(p, pr, opt.Seed, opt.Effort)
	if err != nil {
		return nil, err
	}
	ps.sp = sp
	return ps, nil
}

// encodePeriodic encodes pr, a placement's repetend problem, with the
// period P a variable and every device's window asserted.
func encodePeriodic(p *placement.Placement, pr *smt.Problem, seed, effort int) (_ *Periodic, err error) {
	x, s, err := z3.NewSolving(z3.SolverOptions{Seed: seed, Effort: effort})
	if err != nil {
		return nil, err
	}
	// Closing the context frees the solver too (see NewJoint).
	defer func() {
		if err != nil {
			x.Close()
		}
	}()
	period := x.IntVar("P")
	e, err := smt.Encode(x, s, pr, &period)
	if err != nil {
		return nil, err
	}
	deviceWindows(e, p, period)
	if err := assertLinkWindows(e, SteadyLinks(p), period); err != nil {
		return nil, err
	}
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("repetend: periodic problem: %w", err)
	}
	return &Periodic{x: x, s: s, e: e, period: period}, nil
}

// Close frees the solver.
func (ps *Periodic) Close() { ps.x.Close() }

// probe checks whether period ≤ bound is possible; on Sat it returns the
// period and starts of the model.
func (ps *Periodic) probe(ctx context.Context, bound int) (z3.Status, int, []int, error) {
	ps.s.Push()
	defer ps.s.Pop()
	x := ps.x
	ps.s.Assert(x.Le(ps.period, x.IntVal(bound)))
	ps.checks++
	st, err := ps.s.Check(ctx)
	if st != z3.Sat {
		return st, 0, nil, err
	}
	m, err := ps.s.Model()
	if err != nil {
		return z3.Unknown, 0, nil, err
	}
	defer m.Close()
	P, err := m.Int(ps.period)
	if err != nil {
		return z3.Unknown, 0, nil, err
	}
	starts, err := ps.e.Starts(m)
	if err != nil {
		return z3.Unknown, 0, nil, err
	}
	return z3.Sat, P, normalise(starts), nil
}

func normalise(starts []int) []int {
	lo := starts[0]
	for _, s := range starts {
		lo = min(lo, s)
	}
	out := make([]int, len(starts))
	for i, s := range starts {
		out[i] = s - lo
	}
	return out
}

// Candidate finds the least period in [lo, hi] of the repetend of offsets
// (N_R nr) on a worker's shared encoding (NewPeriodicWorker): the
// candidate's dependencies, memory and latency budget live in one scope.
// It returns what Minimize returns.
func (ps *Periodic) Candidate(ctx context.Context, nr int, offsets []int, lo, hi int) (*Iteration, int, error) {
	p := ps.sp.Placement
	if lo > hi {
		return nil, 0, nil
	}
	ps.s.Push()
	defer ps.s.Pop()
	var precs []smt.Prec
	st := SteadyLinks(p)
	for _, d := range p.Deps {
		precs = append(precs, st.prec(p, d, offsets[d.From]-offsets[d.To]))
	}
	if err := ps.e.AssertPrecedences(precs); err != nil {
		return nil, 0, err
	}
	if budget, shift := BudgetShift(ps.sp); budget > 0 {
		ps.e.AssertMemoryBudget(budget, smt.ShiftEntry(IterationEntry(ps.sp, offsets, nr), shift))
	}
	if err := ps.assertLatency(offsets); err != nil {
		return nil, 0, err
	}
	return ps.minimize(ctx, offsets, lo, hi)
}

// Minimize finds the least period in [lo, hi] of the repetend of
// NewPeriodic's offsets by binary search, the first probe at hi: nil
// when no period up to hi exists, and the number of solver calls. A
// failed call (out of effort, say) returns the best iteration so far
// with its error.
func (ps *Periodic) Minimize(ctx context.Context, lo, hi int) (*Iteration, int, error) {
	return ps.minimize(ctx, ps.offsets, lo, hi)
}

// minimize is Minimize for offsets.
func (ps *Periodic) minimize(ctx context.Context, offsets []int, lo, hi int) (*Iteration, int, error) {
	checks0 := ps.checks
	var best *Iteration
	for lo <= hi {
		bound := hi
		if best != nil {
			bound = lo + (hi-lo)/2
		}
		st, P, starts, err := ps.probe(ctx, bound)
		if err != nil {
			return best, ps.checks - checks0, err
		}
		if st == z3.Sat {
			best = &Iteration{Offsets: append([]int(nil), offsets...), Period: P, Starts: starts}
			hi = P - 1
		} else if best == nil {
			return nil, ps.checks - checks0, nil // nothing up to hi at all
		} else {
			lo = bound + 1
		}
	}
	return best, ps.checks - checks0, nil
}

// Fixed schedules the repetend of NewPeriodic's offsets at exactly the
// given period: nil when the solver finds none.
func (ps *Periodic) Fixed(ctx context.Context, period int) (*Iteration, error) {
	ps.s.Assert(ps.x.Eq(ps.period, ps.x.IntVal(period)))
	st, P, starts, err := ps.probe(ctx, period)
	if err != nil {
		return nil, err
	}
	if st != z3.Sat {
		return nil, nil
	}
	return &Iteration{Offsets: append([]int(nil), ps.offsets...), Period: P, Starts: starts}, nil
}

// latencyDeadlines are the latency rule of budget for fixed offsets (nil
// without a budget): in the steady state, the rule's pair (source i,
// sink j) is s_j + t_j ≤ s_i + L + (n_j − n_i)·P, a deadline with
// n_j − n_i periods (smt.Deadline).
func latencyDeadlines(p *placement.Placement, offsets []int, budget int) []smt.Deadline {
	if budget <= 0 {
		return nil
	}
	var out []smt.Deadline
	for _, lp := range p.LatencyPairs() {
		out = append(out, smt.Deadline{From: lp.Source, To: lp.Sink, Max: budget, Periods: offsets[lp.Sink] - offsets[lp.Source]})
	}
	return out
}

// assertLatency asserts the latency rule of the spec's budget for
// offsets (in the current scope).
func (ps *Periodic) assertLatency(offsets []int) error {
	return ps.e.AssertDeadlines(latencyDeadlines(ps.sp.Placement, offsets, ps.sp.Latency))
}
