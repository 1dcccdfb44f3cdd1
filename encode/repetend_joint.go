package encode

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// Joint is the joint problem of one period P: the offsets n_i are
// integer variables in 0..MaxNR-1 of the same problem as the starts. With
// P fixed, a dependency s_i + t_i ≤ s_j + (n_i − n_j)·P and the entry
// memory Σ_i n_i·m_i stay linear, so one satisfiability check per P
// replaces the enumeration of candidates.
type Joint struct {
	x       *z3.Context
	s       *z3.Solver
	e       *smt.Encoder
	offsets []z3.Int
	sp      spec.Spec
	period  int
}

// NewJoint encodes the joint problem of one period: offsets up to
// opt.MaxNR as variables, under sp's memory and latency budgets, for sp's
// micro-batches.
func NewJoint(sp spec.Spec, period int, opt RepetendOptions) (_ *Joint, err error) {
	p, maxNR, microBatches := sp.Placement, opt.MaxNR, sp.MicroBatches
	e, err := offsetsEncoder(p, opt)
	if err != nil {
		return nil, err
	}
	x, s := e.X, e.S
	// Closing the context frees the solver too: every failure below,
	// however far the building got, leaves nothing behind.
	defer func() {
		if err != nil {
			x.Close()
		}
	}()
	j := &Joint{x: x, s: s, e: e, sp: sp, period: period}
	P := x.IntVal(period)
	var st Steady
	j.offsets, st = assertOffsets(e, p, period, maxNR)
	deviceWindows(e, p, P)
	if err := assertLinkWindows(e, st, P); err != nil {
		return nil, err
	}
	if budget, shift := BudgetShift(sp); budget > 0 {
		e.P.Memory = budget
		// top = N_R − 1 of the offsets found: later iterations start with
		// (N − N_R)·net more memory where a micro-batch leaves some behind.
		top := x.IntVar("top")
		var isTop []z3.Bool
		for _, n := range j.offsets {
			s.Assert(x.Ge(top, n))
			isTop = append(isTop, x.Eq(top, n))
		}
		s.Assert(x.Or(isTop...))
		net := NetMemory(p)
		entry := make([]z3.Int, p.Devices)
		for d := range entry {
			var terms []z3.Int
			for i, b := range p.Blocks {
				if b.Memory != 0 && p.OnDevice(i, d) {
					terms = append(terms, x.Scale(b.Memory, j.offsets[i]))
				}
			}
			if net[d] > 0 && microBatches > 0 {
				// (N − 1 − top)·net = (N − N_R)·net
				terms = append(terms, x.Scale(net[d], x.Sub(x.IntVal(microBatches-1), top)))
			}
			if shift != nil {
				terms = append(terms, x.IntVal(shift[d]))
			}
			entry[d] = x.Add(terms...)
		}
		e.AssertMemoryFrom(entry)
	}
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("repetend: joint problem at period %d: %w", period, err)
	}
	if err := j.assertLatency(sp.Latency, period); err != nil {
		return nil, err
	}
	return j, nil
}

// offsetsEncoder makes the context, the solver and the encoder that
// Joint and DecidedAt share: p's blocks as tasks on their devices, and no
// dependencies yet (assertOffsets adds them with offset terms; only δ = 0
// ones would be known orders, and those are not known in advance). On an
// error the context is closed.
func offsetsEncoder(p *placement.Placement, opt RepetendOptions) (_ *smt.Encoder, err error) {
	x, s, err := z3.NewSolving(z3.SolverOptions{Seed: opt.Seed, Effort: opt.Effort})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			x.Close()
		}
	}()
	pr := repetendProblem(spec.New(p, 0), nil, 0)
	pr.Precs = nil
	return smt.Encode(x, s, pr, nil)
}

// assertOffsets asserts what Joint and DecidedAt share on e, p's
// repetend at period: the offsets n_i as variables in 0..maxNR−1, one of
// them 0 (a shift of all offsets is the same repetend), and every
// dependency with δ = n_i − n_j ≥ 0 periods of slack (property 4.2):
// s_i + t_i + c_ij ≤ s_j + δ·P, with channels the steady delay. It
// returns the offsets and the steady state.
func assertOffsets(e *smt.Encoder, p *placement.Placement, period, maxNR int) ([]z3.Int, Steady) {
	x, s := e.X, e.S
	offsets := make([]z3.Int, len(p.Blocks))
	var zero []z3.Bool
	for i := range p.Blocks {
		n := x.IntVar(fmt.Sprintf("n%d", i))
		offsets[i] = n
		s.Assert(x.Ge(n, x.IntVal(0)), x.Le(n, x.IntVal(maxNR-1)))
		zero = append(zero, x.Eq(n, x.IntVal(0)))
	}
	s.Assert(x.Or(zero...))
	st := SteadyLinks(p)
	for _, d := range p.Deps {
		delta := x.Sub(offsets[d.From], offsets[d.To])
		s.Assert(x.Ge(delta, x.IntVal(0)))
		ready := x.Plus(e.Start[d.From], st.Delay[d])
		s.Assert(x.Le(ready, x.Add(e.Start[d.To], x.Scale(period, delta))))
	}
	return offsets, st
}

// assertLatency asserts the latency rule of budget (0: none) at period
// P with the offsets as variables: the rule's pair (source i, sink j) is
// s_j + t_j ≤ s_i + L + (n_j − n_i)·P, linear in both.
func (j *Joint) assertLatency(budget, period int) error {
	if budget <= 0 {
		return nil
	}
	x, e, p := j.x, j.e, j.sp.Placement
	for _, lp := range p.LatencyPairs() {
		delta := x.Sub(j.offsets[lp.Sink], j.offsets[lp.Source])
		end := x.Plus(e.Start[lp.Sink], p.Blocks[lp.Sink].Time)
		j.s.Assert(x.Le(end, x.Add(x.Plus(e.Start[lp.Source], budget), x.Scale(period, delta))))
	}
	return x.Err()
}

// Close frees the solver.
func (j *Joint) Close() { j.x.Close() }

// SetEffort caps the solver calls from now on (z3.SolverOptions.Effort).
func (j *Joint) SetEffort(effort int) { j.s.SetEffort(effort) }

// Next finds offsets with at most nr micro-batches, different from
// every offset vector excluded so far: nil when none exists (or with
// the error of a call that failed, out of effort say).
func (j *Joint) Next(ctx context.Context, nr int) (*Iteration, error) {
	x := j.x
	j.s.Push()
	defer j.s.Pop()
	for _, n := range j.offsets {
		j.s.Assert(x.Le(n, x.IntVal(nr-1)))
	}
	st, err := j.s.Check(ctx)
	if st != z3.Sat {
		return nil, err
	}
	m, err := j.s.Model()
	if err != nil {
		return nil, err
	}
	defer m.Close()
	offs := make([]int, len(j.offsets))
	for i, n := range j.offsets {
		if offs[i], err = m.Int(n); err != nil {
			return nil, err
		}
	}
	starts, err := j.e.Starts(m)
	if err != nil {
		return nil, err
	}
	return &Iteration{Offsets: offs, Period: j.period, Starts: normalise(starts)}, nil
}

// Exclude forbids one offset vector from now on (a candidate whose
// warmup or cooldown cannot be scheduled).
func (j *Joint) Exclude(offs []int) {
	x := j.x
	diff := make([]z3.Bool, len(offs))
	for i, n := range j.offsets {
		diff[i] = x.Not(x.Eq(n, x.IntVal(offs[i])))
	}
	j.s.Assert(x.Or(diff...))
}
