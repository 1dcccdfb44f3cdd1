package repetend

import (
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/z3"
)

// Repetend is a solved repetend: iteration k runs B_i^{Offsets[i]+k} at
// Starts[i] + k·Period.
type Repetend struct {
	NR      int
	Offsets []int
	Period  int
	Starts  []int // normalised: the earliest is 0
}

// steady is the placement's link rule in a repetend's steady state. With
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
// applies the rule to all of it). Without channels, delay is Delay and
// spans is empty: the encoding is the one without links.
type steady struct {
	delay map[placement.Dep]int // least start-to-start of B_i^n → B_j^n
	spans []linkSpan
}

// linkSpan is the time a block's tensor occupies one link, relative to
// the block's start.
type linkSpan struct {
	block    int
	link     placement.Link
	from, to int
}

// steadyLinks reads the rule (placement's LinkQueue) for every block alone,
// with its links free as it starts: when each of its tensors arrives,
// and when each occupies each link.
func steadyLinks(p *placement.Placement) steady {
	st := steady{delay: make(map[placement.Dep]int, len(p.Deps))}
	if !links.Queued(p) {
		for _, d := range p.Deps {
			st.delay[d] = p.Delay(d)
		}
		return st
	}
	for i, succs := range p.SuccDeps() {
		q := p.NewLinkQueue()
		for _, d := range succs {
			at, _, _ := q.Arrival(d, 0)
			st.delay[d] = at
			if p.Lanes[d] != nil {
				continue // a pair of several links: no queue in the encoding (encode.DepTransfers)
			}
			for _, l := range p.Links(d) {
				st.spans = append(st.spans, linkSpan{block: i, link: l, from: q.Free(l) - p.Transfer(d), to: q.Free(l)})
			}
		}
	}
	return st
}

// prec is dependency d's precedence in the steady state, with periods·P
// of slack: s_i + delay ≤ s_j + periods·P (smt's instance rule without channels).
func (st steady) prec(p *placement.Placement, d placement.Dep, periods int) smt.Prec {
	return smt.Prec{From: d.From, To: d.To, Lag: p.Blocks[d.From].Time - st.delay[d], Periods: periods}
}

// assertLinkWindows is assertWindows for links: the spans of one
// iteration on a link lie in a window of length P, so that iterations
// never overlap on it, and two spans of different blocks on one link run
// in the order of their blocks on the link's first device (Encoder's
// Before), the order in which the rule takes them. Nothing without
// channels.
func assertLinkWindows(e *smt.Encoder, st steady, period z3.Int) error {
	x := e.X
	var links []placement.Link
	on := map[placement.Link][]linkSpan{}
	for _, sp := range st.spans {
		if _, ok := on[sp.link]; !ok {
			links = append(links, sp.link)
		}
		on[sp.link] = append(on[sp.link], sp)
	}
	for _, l := range links {
		spans := on[l]
		w := x.IntVar(fmt.Sprintf("l%d_%d", l.From, l.To))
		for _, sp := range spans {
			e.S.Assert(x.Le(w, x.Plus(e.Start[sp.block], sp.from)))
			e.S.Assert(x.Le(x.Plus(e.Start[sp.block], sp.to), x.Add(w, period)))
		}
		for k, a := range spans {
			for _, b := range spans[k+1:] {
				if a.block == b.block {
					continue // apart by construction
				}
				lit, err := e.Before(a.block, b.block)
				if err != nil {
					return fmt.Errorf("repetend: link %d->%d: %w", l.From, l.To, err)
				}
				e.S.Assert(x.Implies(lit, x.Le(x.Plus(e.Start[a.block], a.to), x.Plus(e.Start[b.block], b.from))))
				e.S.Assert(x.Implies(x.Not(lit), x.Le(x.Plus(e.Start[b.block], b.to), x.Plus(e.Start[a.block], a.from))))
			}
		}
	}
	return nil
}

// problem is the repetend of one candidate as an smt.Problem: one task per
// block, dependencies with δ = n_i − n_j periods of slack (eq. 4:
// s_i + t_i + c_ij ≤ s_j + δ·P, the placement's Delay; with channels the
// steady state's delay, see steady), and the memory budget from the entry
// memory of the iteration that starts highest (see iterationEntry).
func problem(p *placement.Placement, offsets []int, nr, memory, microBatches int) *smt.Problem {
	pr := &smt.Problem{Devices: p.Devices}
	if offsets != nil {
		// Per-device budgets as the one budget and shifted entries
		// (encode.BudgetShift).
		budget, shift := encode.BudgetShift(p, memory)
		pr.Memory = budget
		pr.Entry = smt.ShiftEntry(iterationEntry(p, offsets, nr, microBatches), shift)
	}
	for _, b := range p.Blocks {
		pr.Tasks = append(pr.Tasks, smt.Task{Name: b.ID, Devices: b.Devices, Time: b.Time, Memory: b.Memory})
	}
	st := steadyLinks(p)
	for _, d := range p.Deps {
		periods := 0
		if offsets != nil {
			periods = offsets[d.From] - offsets[d.To]
		}
		pr.Precs = append(pr.Precs, st.prec(p, d, periods))
	}
	return pr
}

// assertWindows puts every device's blocks of one iteration inside a window
// of length P (E_R^d + W_R^d ≤ P), so that consecutive iterations never
// interleave on a device.
//
// Two tightenings that lose no repetend: each window starts with its
// earliest block, and device 0's window starts at 0 (every start may be
// shifted by the same amount). They make the joint search's checks
// several times faster.
func assertWindows(e *smt.Encoder, p *placement.Placement, period z3.Int) {
	deviceWindows(e, p, period)
}

// deviceWindows asserts assertWindows' rule and returns every device's
// window start (nil for a device without blocks): the recomputes of a
// decided repetend go into them.
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

// periodSolver holds one candidate's encoding with P a variable, so that
// the binary search on P is incremental.
type periodSolver struct {
	x      *z3.Context
	s      *z3.Solver
	e      *smt.Encoder
	period z3.Int
	checks int
	// latency is the latency budget asserted with each candidate's
	// offsets (0: none; see latency.go).
	latency int
}

// iterationEntry is the highest memory any iteration starts with: the
// entry memory, plus, on a device where one micro-batch leaves memory
// behind (net > 0), what the first N − N_R iterations leave. With N
// unknown (0) only the first iteration is counted.
func iterationEntry(p *placement.Placement, offsets []int, nr, microBatches int) []int {
	entry := EntryMemory(p, offsets)
	if microBatches > nr {
		for d, net := range NetMemory(p) {
			entry[d] += max(0, net) * (microBatches - nr)
		}
	}
	return entry
}

// newPeriodSolver encodes the repetend problem of offsets (N_R nr) under
// opt's budget, for opt's micro-batches, with its seed and effort.
func newPeriodSolver(p *placement.Placement, offsets []int, nr int, opt PeriodOptions) (*periodSolver, error) {
	return encodePeriodic(p, problem(p, offsets, nr, opt.Memory, opt.MicroBatches), opt.Seed, opt.Effort)
}

// encodePeriodic encodes pr, a placement's repetend problem, with the
// period P a variable and every device's window asserted.
func encodePeriodic(p *placement.Placement, pr *smt.Problem, seed, effort int) (_ *periodSolver, err error) {
	x := z3.NewContext()
	// Closing the context frees the solver too (see newJointSolver).
	defer func() {
		if err != nil {
			x.Close()
		}
	}()
	s, err := x.NewSolver(z3.SolverOptions{Seed: seed, Effort: effort})
	if err != nil {
		return nil, err
	}
	period := x.IntVar("P")
	e, err := smt.Encode(x, s, pr, &period)
	if err != nil {
		return nil, err
	}
	assertWindows(e, p, period)
	if err := assertLinkWindows(e, steadyLinks(p), period); err != nil {
		return nil, err
	}
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("repetend: periodic problem: %w", err)
	}
	return &periodSolver{x: x, s: s, e: e, period: period}, nil
}

func (ps *periodSolver) close() { ps.x.Close() }

// probe checks whether period ≤ bound is possible; on Sat it returns the
// period and starts of the model.
func (ps *periodSolver) probe(ctx context.Context, bound int) (z3.Status, int, []int, error) {
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

// MinimizePeriod finds the least period in [lo, hi] of the candidate's
// repetend under the memory budget by binary search; r is nil when no
// period ≤ hi exists.
func MinimizePeriod(ctx context.Context, p *placement.Placement, c Assignment, lo, hi int, opt PeriodOptions) (r *Repetend, checks int, err error) {
	if lo > hi {
		return nil, 0, nil
	}
	ps, err := newPeriodSolver(p, c.Offsets, c.NR, opt)
	if err != nil {
		return nil, 0, err
	}
	defer ps.close()
	ps.latency = opt.Latency
	if err := ps.assertLatency(p, c.Offsets); err != nil {
		return nil, 0, err
	}
	return ps.search(ctx, c, lo, hi)
}

// newWorkerSolver encodes what all candidates of a placement share —
// starts, exclusive devices, windows, the period — once, so that a worker
// solves candidate after candidate in Push/Pop scopes (solveCandidate)
// instead of building a Z3 context for each.
func newWorkerSolver(p *placement.Placement, seed, effort int) (*periodSolver, error) {
	pr := problem(p, nil, 1, 0, 0)
	pr.Precs = nil // they depend on the candidate's offsets
	return encodePeriodic(p, pr, seed, effort)
}

// solveCandidate is MinimizePeriod on a worker's shared encoding: the
// candidate's dependencies and memory (opt's budget and micro-batches)
// live in one scope.
func (ps *periodSolver) solveCandidate(ctx context.Context, p *placement.Placement, c Assignment, lo, hi int, opt PeriodOptions) (*Repetend, int, error) {
	memory, microBatches := opt.Memory, opt.MicroBatches
	if lo > hi {
		return nil, 0, nil
	}
	ps.s.Push()
	defer ps.s.Pop()
	var precs []smt.Prec
	st := steadyLinks(p)
	for _, d := range p.Deps {
		precs = append(precs, st.prec(p, d, c.Offsets[d.From]-c.Offsets[d.To]))
	}
	if err := ps.e.AssertPrecedences(precs); err != nil {
		return nil, 0, err
	}
	if budget, shift := encode.BudgetShift(p, memory); budget > 0 {
		ps.e.AssertMemoryBudget(budget, smt.ShiftEntry(iterationEntry(p, c.Offsets, c.NR, microBatches), shift))
	}
	if err := ps.assertLatency(p, c.Offsets); err != nil {
		return nil, 0, err
	}
	return ps.search(ctx, c, lo, hi)
}

// search finds the least period in [lo, hi] by binary search, the first
// probe at hi.
func (ps *periodSolver) search(ctx context.Context, c Assignment, lo, hi int) (*Repetend, int, error) {
	checks0 := ps.checks
	var best *Repetend
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
			best = &Repetend{NR: c.NR, Offsets: append([]int(nil), c.Offsets...), Period: P, Starts: starts}
			hi = P - 1
		} else if best == nil {
			return nil, ps.checks - checks0, nil // nothing up to hi at all
		} else {
			lo = bound + 1
		}
	}
	return best, ps.checks - checks0, nil
}

// SolveFixed schedules a candidate's repetend at exactly the given period,
// in a fresh solver: the same inputs always give the same starts, whatever
// search found the period.
func SolveFixed(ctx context.Context, p *placement.Placement, c Assignment, period int, opt PeriodOptions) (*Repetend, error) {
	nr, offsets := c.NR, c.Offsets
	ps, err := newPeriodSolver(p, offsets, nr, opt)
	if err != nil {
		return nil, err
	}
	defer ps.close()
	ps.latency = opt.Latency
	if err := ps.assertLatency(p, offsets); err != nil {
		return nil, err
	}
	ps.s.Assert(ps.x.Eq(ps.period, ps.x.IntVal(period)))
	st, P, starts, err := ps.probe(ctx, period)
	if err != nil {
		return nil, err
	}
	if st != z3.Sat {
		return nil, errors.New("repetend: no schedule at the period found before (solver disagrees with itself)")
	}
	return &Repetend{NR: nr, Offsets: append([]int(nil), offsets...), Period: P, Starts: starts}, nil
}
