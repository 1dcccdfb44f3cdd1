package repetend

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/z3"
)

// jointSolver is the joint problem of one period P: the offsets n_i are
// integer variables in 0..NR-1 of the same problem as the starts. With P
// fixed, a dependency s_i + t_i ≤ s_j + (n_i − n_j)·P and the entry memory
// Σ_i n_i·m_i stay linear, so one satisfiability check per P replaces the
// enumeration of candidates.
type jointSolver struct {
	x       *z3.Context
	s       *z3.Solver
	e       *smt.Encoder
	offsets []z3.Int
	p       *placement.Placement
}

// newJointSolver encodes the joint problem of one period: offsets up to
// opt.MaxNR as variables, under opt's budget, for opt's micro-batches.
func newJointSolver(p *placement.Placement, period int, opt Options) (_ *jointSolver, err error) {
	maxNR, memory, microBatches, seed, effort := opt.MaxNR, opt.Memory, opt.MicroBatches, opt.Seed, opt.effort()
	x := z3.NewContext()
	// Closing the context frees the solver too: every failure below,
	// however far the building got, leaves nothing behind.
	defer func() {
		if err != nil {
			x.Close()
		}
	}()
	s, err := x.NewSolver(z3.SolverOptions{Seed: seed, Effort: effort})
	if err != nil {
		return nil, err
	}
	// Dependencies are added below with offset terms; only δ = 0 ones
	// would be known orders, and those are not known in advance.
	pr := problem(p, nil, 0, 0, 0)
	pr.Precs = nil
	e, err := smt.Encode(x, s, pr, nil)
	if err != nil {
		return nil, err
	}
	j := &jointSolver{x: x, s: s, e: e, p: p}
	P := x.IntVal(period)
	j.offsets = make([]z3.Int, len(p.Blocks))
	var zero []z3.Bool
	for i := range p.Blocks {
		n := x.IntVar(fmt.Sprintf("n%d", i))
		j.offsets[i] = n
		s.Assert(x.Ge(n, x.IntVal(0)), x.Le(n, x.IntVal(maxNR-1)))
		zero = append(zero, x.Eq(n, x.IntVal(0)))
	}
	s.Assert(x.Or(zero...)) // a shift of all offsets is the same repetend
	st := steadyLinks(p)
	for _, d := range p.Deps {
		delta := x.Sub(j.offsets[d.From], j.offsets[d.To])
		s.Assert(x.Ge(delta, x.IntVal(0))) // property 4.2
		// s_i + t_i + c_ij ≤ s_j + δ·P (with channels, the steady delay)
		ready := x.Plus(e.Start[d.From], st.delay[d])
		s.Assert(x.Le(ready, x.Add(e.Start[d.To], x.Scale(period, delta))))
	}
	assertWindows(e, p, P)
	if err := assertLinkWindows(e, st, P); err != nil {
		return nil, err
	}
	if budget, shift := encode.BudgetShift(p, memory); budget > 0 {
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
	return j, nil
}

func (j *jointSolver) close() { j.x.Close() }

// next finds offsets with at most nr micro-batches, different from every
// offset vector excluded so far.
func (j *jointSolver) next(ctx context.Context, nr int) (z3.Status, []int, []int, error) {
	x := j.x
	j.s.Push()
	defer j.s.Pop()
	for _, n := range j.offsets {
		j.s.Assert(x.Le(n, x.IntVal(nr-1)))
	}
	st, err := j.s.Check(ctx)
	if st != z3.Sat {
		return st, nil, nil, err
	}
	m, err := j.s.Model()
	if err != nil {
		return z3.Unknown, nil, nil, err
	}
	defer m.Close()
	offs := make([]int, len(j.offsets))
	for i, n := range j.offsets {
		if offs[i], err = m.Int(n); err != nil {
			return z3.Unknown, nil, nil, err
		}
	}
	starts, err := j.e.Starts(m)
	if err != nil {
		return z3.Unknown, nil, nil, err
	}
	return z3.Sat, offs, normalise(starts), nil
}

// exclude forbids one offset vector from now on (a candidate whose warmup
// or cooldown cannot be scheduled).
func (j *jointSolver) exclude(offs []int) {
	x := j.x
	diff := make([]z3.Bool, len(offs))
	for i, n := range j.offsets {
		diff[i] = x.Not(x.Eq(n, x.IntVal(offs[i])))
	}
	j.s.Assert(x.Or(diff...))
}
