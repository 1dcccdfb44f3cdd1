package encode

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// The repetend with the devices as decisions (She et al., "Automatic
// Operator-level Parallelism Planning for Distributed Deep Learning – A
// Mixed-Integer Programming Approach", §III eqs 6–10, on the Tessel
// paper's repetend): for a placement whose blocks give candidates, one
// Boolean x_{i,o} per block i and option o, exactly one true (eq 6), the
// same option in every iteration. For a period P the offsets n_i are
// integer variables as in the joint encoding (Joint), and every
// constraint of the repetend is conditioned on the options it depends on:
//
//   - a dependency i → j, options a of i and b of j: x_{i,a} ∧ x_{j,b} →
//     s_i + t_{i,a} + c_{a,b} ≤ s_j + (n_i − n_j)·P, with c the transfer
//     between the two groups (0 when they share a device; placement's
//     OptionTransfer, the times of Costs on a cluster; eqs 8–9);
//   - each device d has a window w_d of length P that holds every block
//     whose chosen group holds d: x_{i,a} → w_d ≤ s_i ∧ s_i + t_{i,a} ≤
//     w_d + P (consecutive iterations never interleave on d);
//   - two blocks whose options may share a device are ordered by a
//     Boolean o_ij: x_{i,a} ∧ x_{j,b} ∧ o_ij → s_i + t_{i,a} ≤ s_j, and
//     the other way round under ¬o_ij, for options a, b that share one
//     (eq 7);
//   - memory (eq 10): on a device with a budget, right after each block
//     that allocates on it, the iteration's entry memory (Σ_i on(i,d)·
//     m_i·n_i, plus what the first N − N_R micro-batches leave behind
//     where one leaves memory: IterationEntry) plus the blocks on d before
//     it fit the budget.
//
// Links as resources (channels), latency budgets and memory decisions
// are not in this encoding.

// AssignedAt looks for a choice of devices (placement.Choose: each
// block's option) and a repetend of sp's placement at period P under
// sp's memory budget, for sp's micro-batches, with at most opt.MaxNR
// micro-batches in flight and a choice other than those opt.Exclude
// lists: nil, nil when none exists.
func AssignedAt(ctx context.Context, sp spec.Spec, P int, opt RepetendOptions) ([]int, *Iteration, error) {
	p := sp.Placement
	x, s, err := z3.NewSolving(z3.SolverOptions{Seed: opt.Seed, Effort: opt.Effort})
	if err != nil {
		return nil, nil, err
	}
	defer x.Close()
	e := &assignedEnc{x: x, s: s, p: p, P: P, order: map[[2]int]z3.Bool{}}
	e.variables(opt)
	e.dependencies()
	e.windows()
	e.exclusive()
	if p.Limited(sp.Memory) {
		e.memory(sp, opt)
	}
	if err := x.Err(); err != nil {
		return nil, nil, fmt.Errorf("repetend: problem with assignment literals at period %d: %w", P, err)
	}
	st, err := s.Check(ctx)
	if err != nil {
		return nil, nil, err
	}
	if st != z3.Sat {
		return nil, nil, nil
	}
	m, err := s.Model()
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	return e.decode(m)
}

// assignedEnc is assignedAt's problem: for every block a literal per
// device option (choose), its start and its offset, and the order
// literals of pairs of blocks that may share a device.
type assignedEnc struct {
	x      *z3.Context
	s      *z3.Solver
	p      *placement.Placement
	P      int
	choose [][]z3.Bool
	start  []z3.Int
	offset []z3.Int
	order  map[[2]int]z3.Bool
}

// variables declares every block's option, start and offset: one
// option, none that takes longer than P, offsets below opt.MaxNR with one
// at 0, and none of the choices opt.Exclude.
func (e *assignedEnc) variables(opt RepetendOptions) {
	x, s, p, P := e.x, e.s, e.p, e.P
	k := p.K()
	e.choose = make([][]z3.Bool, k)
	e.start = make([]z3.Int, k)
	e.offset = make([]z3.Int, k)
	choose, start, offset := e.choose, e.start, e.offset
	var zero []z3.Bool
	for i := range k {
		opts := p.DeviceOptions(i)
		ones := make([]int, len(opts))
		for o := range opts {
			choose[i] = append(choose[i], x.BoolVar(fmt.Sprintf("x%d_%d", i, o)))
			ones[o] = 1
			if p.OptionTime(i, o) > P {
				s.Assert(x.Not(choose[i][o]))
			}
		}
		s.Assert(x.Or(choose[i]...), x.PbLe(choose[i], ones, 1))
		start[i] = x.IntVar(fmt.Sprintf("s%d", i))
		offset[i] = x.IntVar(fmt.Sprintf("n%d", i))
		s.Assert(x.Ge(start[i], x.IntVal(0)), x.Ge(offset[i], x.IntVal(0)), x.Le(offset[i], x.IntVal(opt.MaxNR-1)))
		zero = append(zero, x.Eq(offset[i], x.IntVal(0)))
	}
	s.Assert(x.Or(zero...)) // a shift of all offsets is the same repetend
	for _, c := range opt.Exclude {
		var diff []z3.Bool
		for i, o := range c {
			if i < k && o >= 0 && o < len(choose[i]) {
				diff = append(diff, x.Not(choose[i][o]))
			}
		}
		if len(diff) == 0 {
			s.Assert(x.False())
			continue
		}
		s.Assert(x.Or(diff...))
	}
}

// dependencies: with the transfer of the chosen groups (eqs 8–9).
func (e *assignedEnc) dependencies() {
	x, s, p, P := e.x, e.s, e.p, e.P
	for _, d := range p.Deps {
		delta := x.Sub(e.offset[d.From], e.offset[d.To])
		s.Assert(x.Ge(delta, x.IntVal(0))) // property 4.2
		slack := x.Add(e.start[d.To], x.Scale(P, delta))
		for a := range p.DeviceOptions(d.From) {
			for b := range p.DeviceOptions(d.To) {
				lag := p.OptionTime(d.From, a) + p.OptionTransfer(d, a, b)
				s.Assert(x.Implies(x.And(e.choose[d.From][a], e.choose[d.To][b]), x.Le(x.Plus(e.start[d.From], lag), slack)))
			}
		}
	}
}

// windows of length P on every device.
func (e *assignedEnc) windows() {
	x, s, p, P := e.x, e.s, e.p, e.P
	for d := range p.Devices {
		w := x.IntVar(fmt.Sprintf("w%d", d))
		for i := range p.K() {
			for o, g := range p.DeviceOptions(i) {
				if !contains(g, d) {
					continue
				}
				s.Assert(x.Implies(e.choose[i][o], x.And(x.Le(w, e.start[i]), x.Le(x.Plus(e.start[i], p.OptionTime(i, o)), x.Plus(w, P)))))
			}
		}
	}
}

// lit is the order literal of blocks i < j: i before j.
func (e *assignedEnc) lit(i, j int) z3.Bool {
	key := [2]int{i, j}
	if o, ok := e.order[key]; ok {
		return o
	}
	o := e.x.BoolVar(fmt.Sprintf("o%d_%d", i, j))
	e.order[key] = o
	return o
}

// before is the literal of block i before block j, i ≠ j.
func (e *assignedEnc) before(i, j int) z3.Bool {
	if i > j {
		return e.x.Not(e.lit(j, i))
	}
	return e.lit(i, j)
}

// exclusive: two blocks whose chosen groups share a device do not
// overlap (eq 7).
func (e *assignedEnc) exclusive() {
	x, s, p := e.x, e.s, e.p
	k := p.K()
	for i := range k {
		for j := i + 1; j < k; j++ {
			for a, ga := range p.DeviceOptions(i) {
				for b, gb := range p.DeviceOptions(j) {
					if !overlaps(ga, gb) {
						continue
					}
					cond := x.And(e.choose[i][a], e.choose[j][b])
					o := e.before(i, j)
					s.Assert(x.Implies(x.And(cond, o), x.Le(x.Plus(e.start[i], p.OptionTime(i, a)), e.start[j])))
					s.Assert(x.Implies(x.And(cond, x.Not(o)), x.Le(x.Plus(e.start[j], p.OptionTime(j, b)), e.start[i])))
				}
			}
		}
	}
}

// on is the literal of block i chosen onto a group with device d.
func (e *assignedEnc) on(i, d int) z3.Bool {
	var lits []z3.Bool
	for o, g := range e.p.DeviceOptions(i) {
		if contains(g, d) {
			lits = append(lits, e.choose[i][o])
		}
	}
	if len(lits) == 0 {
		return e.x.False()
	}
	return e.x.Or(lits...)
}

// memory (eq 10) from the entry memory of the iteration that starts
// highest (IterationEntry).
func (e *assignedEnc) memory(sp spec.Spec, opt RepetendOptions) {
	x, s, p := e.x, e.s, e.p
	on, before := e.on, e.before
	top := x.IntVar("top") // N_R − 1
	var isTop []z3.Bool
	for _, n := range e.offset {
		s.Assert(x.Ge(top, n))
		isTop = append(isTop, x.Eq(top, n))
	}
	s.Assert(x.Or(isTop...))
	for d := range p.Devices {
		budget := p.Budget(d, sp.Memory)
		if budget <= 0 {
			continue
		}
		zeroInt := x.IntVal(0)
		var entry, net []z3.Int
		for i, b := range p.Blocks {
			if b.Memory == 0 || !canHold(p, i, d) {
				continue
			}
			entry = append(entry, x.Ite(on(i, d), x.Scale(b.Memory, e.offset[i]), zeroInt))
			net = append(net, x.Ite(on(i, d), x.IntVal(b.Memory), zeroInt))
		}
		if sp.MicroBatches > 0 && len(net) > 0 {
			sum := x.Add(net...)
			pos := x.Ite(x.Gt(sum, zeroInt), sum, zeroInt)
			for t := range opt.MaxNR {
				if left := sp.MicroBatches - 1 - t; left > 0 {
					entry = append(entry, x.Ite(x.Eq(top, x.IntVal(t)), x.Scale(left, pos), zeroInt))
				}
			}
		}
		for j, bj := range p.Blocks {
			if bj.Memory <= 0 || !canHold(p, j, d) {
				continue
			}
			if bj.Memory > budget {
				s.Assert(x.Not(on(j, d)))
				continue
			}
			terms := append([]z3.Int(nil), entry...)
			for i, bi := range p.Blocks {
				if i == j || bi.Memory == 0 || !canHold(p, i, d) {
					continue
				}
				terms = append(terms, x.Ite(x.And(on(i, d), before(i, j)), x.IntVal(bi.Memory), zeroInt))
			}
			if len(terms) == 0 {
				continue
			}
			s.Assert(x.Implies(on(j, d), x.Le(x.Add(terms...), x.IntVal(budget-bj.Memory))))
		}
	}
}

// decode reads the choice and the repetend from a model.
func (e *assignedEnc) decode(m *z3.Model) ([]int, *Iteration, error) {
	k := e.p.K()
	choice := make([]int, k)
	offs := make([]int, k)
	starts := make([]int, k)
	var err error
	for i := range k {
		choice[i] = -1
		for o, b := range e.choose[i] {
			v, err := m.Bool(b)
			if err != nil {
				return nil, nil, err
			}
			if v {
				choice[i] = o
			}
		}
		if choice[i] < 0 {
			return nil, nil, fmt.Errorf("repetend: no option chosen for block %d (encoder bug)", i)
		}
		if offs[i], err = m.Int(e.offset[i]); err != nil {
			return nil, nil, err
		}
		if starts[i], err = m.Int(e.start[i]); err != nil {
			return nil, nil, err
		}
	}
	return choice, &Iteration{Offsets: offs, Period: e.P, Starts: normalise(starts)}, nil
}

func contains(g []int, d int) bool {
	for _, x := range g {
		if x == d {
			return true
		}
	}
	return false
}

func overlaps(g, h []int) bool {
	for _, a := range g {
		if contains(h, a) {
			return true
		}
	}
	return false
}

// canHold reports whether some option of block i holds device d.
func canHold(p *placement.Placement, i, d int) bool {
	for _, g := range p.DeviceOptions(i) {
		if contains(g, d) {
			return true
		}
	}
	return false
}
