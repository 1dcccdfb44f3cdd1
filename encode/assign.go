package encode

import (
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// The time-optimal encoding with the devices as decisions (She et al.,
// "Automatic Operator-level Parallelism Planning for Distributed Deep
// Learning – A Mixed-Integer Programming Approach", §III): for a placement
// whose blocks give candidates (placement's "Where as a decision"), a
// Boolean x_{i,o} per block i and option o (eq 6: one option per block,
// the same for every micro-batch), a start per instance, and every
// constraint conditioned on the options it depends on:
//
//   - a dependency i → j of micro-batch n, for options a of i and b of j:
//     x_{i,a} ∧ x_{j,b} → s_{j,n} ≥ s_{i,n} + t_{i,a} + c_{a,b}, c being
//     the transfer time between the two groups, 0 when they share a device
//     (eqs 8–9; a pair of devices without a link of its own takes the
//     cluster's default link, placement's Costs);
//   - two instances whose options may share a device are ordered by a
//     Boolean o, and for options a, b that do share one: x_{i,a} ∧
//     x_{j,b} ∧ o → the first ends before the second starts, and the
//     other way round under ¬o (eq 7, the exclusivity of a device);
//   - the memory of a device d right after an instance that allocates on
//     it is bounded by d's budget, counting the instances on d before it
//     (eq 10): on(j, d) → Σ_i [on(i, d) ∧ i before j]·m_i + m_j ≤ M_d;
//   - instances of one block run in micro-batch order (the Tessel paper's
//     property 4.1).
//
// Links as resources (rule/links) and memory decisions are not
// in this encoding: MinimizeAssigned refuses a placement with channels.

// AssignedOptions are MinimizeAssigned's effort and known bounds; the
// problem (the open placement, the micro-batches, the budget) is its spec.
type AssignedOptions struct {
	// Upper, when > 0, asks for a schedule that ends before Upper (an
	// incumbent's makespan): when none exists the answer is proven with
	// no schedule.
	Upper int
	// Lower is a known lower bound of the makespan over every choice (0:
	// none); the binary search starts there.
	Lower int
	smt.Options
}

// Assigned is MinimizeAssigned's answer.
type Assigned struct {
	// Choice is each block's option (placement.Choose) and Instances the
	// schedule on it, every block of every micro-batch; both nil when no
	// schedule ends before Upper.
	Choice    []int
	Instances []schedule.Instance
	Makespan  int
	// LowerBound is proven: no choice and schedule end earlier (Upper
	// when nothing ends before it and that was proven). Proven is set
	// when the search finished: LowerBound meets Makespan, or nothing
	// ends before Upper.
	LowerBound int
	Proven     bool
	Checks     int
}

// MinimizeAssigned chooses an option for every block of sp's placement
// and start times for every instance of sp's micro-batches that minimise
// the makespan under sp's budget (see the encoding above), by binary
// search between opt.Lower and the best schedule found (below opt.Upper).
// When ctx ends or a call runs out of effort the best schedule so far is
// returned, not proven. sp's latency budget and decisions are not in the
// encoding: a caller asks rules.Unhandled first.
func MinimizeAssigned(ctx context.Context, sp spec.Spec, opt AssignedOptions) (*Assigned, error) {
	p := sp.Placement
	if links.Queued(p) {
		return nil, errors.New("smt: links as resources (channels) are not in the encoding with assignment literals")
	}
	n := sp.MicroBatches
	if n < 1 {
		return nil, fmt.Errorf("smt: %d micro-batches", n)
	}
	x, s, err := z3.NewSolving(z3.SolverOptions{Seed: opt.Seed, Effort: opt.Effort})
	if err != nil {
		return nil, err
	}
	defer x.Close()
	e := encodeAssigned(x, s, sp)
	if err := x.Err(); err != nil {
		return nil, err
	}
	out := &Assigned{LowerBound: opt.Lower}
	probe := func(bound int) (z3.Status, error) {
		assertBound := func(b int) { s.Assert(x.Le(e.makespan, x.IntVal(b))) }
		return smt.ProbeMakespan(ctx, s, &out.Checks, bound, assertBound, func(m *z3.Model) error {
			choice, ins, ms, err := e.read(m)
			if err != nil {
				return err
			}
			if out.Choice == nil || ms < out.Makespan {
				out.Choice, out.Instances, out.Makespan = choice, ins, ms
			}
			return nil
		})
	}
	lo := opt.Lower
	hi := -1 // the best makespan found, or -1
	if opt.Upper > 0 {
		hi = opt.Upper
	}
	for hi < 0 || lo < hi {
		if opt.Progress != nil && hi >= 0 {
			opt.Progress(lo, hi)
		}
		mid := -1
		if hi >= 0 {
			mid = lo + (hi-1-lo)/2
		}
		st, err := probe(mid)
		switch {
		case errors.Is(err, z3.ErrInterrupted), errors.Is(err, z3.ErrEffort):
			out.LowerBound = lo
			return out, nil
		case err != nil:
			return nil, err
		case st == z3.Sat:
			hi = out.Makespan
		case mid < 0:
			return nil, smt.ErrInfeasible
		default:
			lo = mid + 1
		}
	}
	out.LowerBound, out.Proven = lo, true
	return out, nil
}

// assignedEncoding is the encoding of MinimizeAssigned: the variables it
// reads back.
type assignedEncoding struct {
	p        *placement.Placement
	n        int
	x        *z3.Context
	choose   [][]z3.Bool // choose[i][o]: block i runs on option o
	start    [][]z3.Int  // start[n][i]
	makespan z3.Int
	// reach[i][j]: a path of dependencies leads from block i to j.
	reach [][]bool
	// order holds the order literals made so far (lit).
	order map[[4]int]z3.Bool
}

func encodeAssigned(x *z3.Context, s *z3.Solver, sp spec.Spec) *assignedEncoding {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	e := &assignedEncoding{p: p, n: n, x: x, makespan: x.IntVar("C"), reach: reachability(p), order: map[[4]int]z3.Bool{}}
	e.options(s)
	e.dependencies(s)
	e.exclusive(s)
	e.memory(s, memory)
	return e
}

// options adds x_{i,o}, exactly one option per block (eq 6), and the
// starts, each instance ending by the makespan on its option.
func (e *assignedEncoding) options(s *z3.Solver) {
	x, p, n, k := e.x, e.p, e.n, e.p.K()
	e.choose = make([][]z3.Bool, k)
	for i := range k {
		opts := p.DeviceOptions(i)
		ones := make([]int, len(opts))
		for o := range opts {
			e.choose[i] = append(e.choose[i], x.BoolVar(fmt.Sprintf("x%d_%d", i, o)))
			ones[o] = 1
		}
		s.Assert(x.Or(e.choose[i]...), x.PbLe(e.choose[i], ones, 1))
	}
	e.start = make([][]z3.Int, n)
	for m := range n {
		e.start[m] = make([]z3.Int, k)
		for i := range k {
			e.start[m][i] = x.IntVar(fmt.Sprintf("s%d_%d", i, m))
			s.Assert(x.Ge(e.start[m][i], x.IntVal(0)))
			for o := range p.DeviceOptions(i) {
				s.Assert(x.Implies(e.choose[i][o], x.Le(x.Plus(e.start[m][i], p.OptionTime(i, o)), e.makespan)))
			}
		}
	}
}

// dependencies adds the dependencies with the transfer of the chosen
// groups (eqs 8–9), and the instances of one block in micro-batch order.
func (e *assignedEncoding) dependencies(s *z3.Solver) {
	x, p, n, k := e.x, e.p, e.n, e.p.K()
	for _, d := range p.Deps {
		for a := range p.DeviceOptions(d.From) {
			for b := range p.DeviceOptions(d.To) {
				lag := p.OptionTime(d.From, a) + p.OptionTransfer(d, a, b)
				cond := x.And(e.choose[d.From][a], e.choose[d.To][b])
				for m := range n {
					s.Assert(x.Implies(cond, x.Le(x.Plus(e.start[m][d.From], lag), e.start[m][d.To])))
				}
			}
		}
	}
	for i := range k {
		for o := range p.DeviceOptions(i) {
			for m := 1; m < n; m++ {
				s.Assert(x.Implies(e.choose[i][o], x.Le(x.Plus(e.start[m-1][i], p.OptionTime(i, o)), e.start[m][i])))
			}
		}
	}
}

// before says whether instance (i, m) surely ends before (j, l) starts
// (known, value): when a path of dependencies leads from i to j and m ≤ l.
func (e *assignedEncoding) before(i, m, j, l int) (known, value bool) {
	switch {
	case i == j:
		return true, m < l
	case e.reach[i][j] && m <= l:
		return true, true
	case e.reach[j][i] && l <= m:
		return true, false
	}
	return false, false
}

// lit is the order literal "(i, m) before (j, l)", whose order is not
// known: one variable per pair of instances.
func (e *assignedEncoding) lit(i, m, j, l int) z3.Bool {
	if key := [4]int{i, m, j, l}; i < j || i == j && m < l {
		if o, ok := e.order[key]; ok {
			return o
		}
		o := e.x.BoolVar(fmt.Sprintf("o%d_%d_%d_%d", i, m, j, l))
		e.order[key] = o
		return o
	}
	return e.x.Not(e.order[[4]int{j, l, i, m}])
}

// exclusive adds exclusivity (eq 7): an order literal per pair of
// instances that may share a device and whose order is not known.
func (e *assignedEncoding) exclusive(s *z3.Solver) {
	x, p, n, k := e.x, e.p, e.n, e.p.K()
	overlap := func(g, h []int) bool {
		for _, a := range g {
			for _, b := range h {
				if a == b {
					return true
				}
			}
		}
		return false
	}
	for i := range k {
		for j := i + 1; j < k; j++ {
			for a, ga := range p.DeviceOptions(i) {
				for b, gb := range p.DeviceOptions(j) {
					if !overlap(ga, gb) {
						continue
					}
					cond := x.And(e.choose[i][a], e.choose[j][b])
					for m := range n {
						for l := range n {
							ei := x.Plus(e.start[m][i], p.OptionTime(i, a))
							ej := x.Plus(e.start[l][j], p.OptionTime(j, b))
							if known, val := e.before(i, m, j, l); known {
								if val {
									s.Assert(x.Implies(cond, x.Le(ei, e.start[l][j])))
								} else {
									s.Assert(x.Implies(cond, x.Le(ej, e.start[m][i])))
								}
								continue
							}
							o := e.lit(i, m, j, l)
							s.Assert(x.Implies(x.And(cond, o), x.Le(ei, e.start[l][j])))
							s.Assert(x.Implies(x.And(cond, x.Not(o)), x.Le(ej, e.start[m][i])))
						}
					}
				}
			}
		}
	}
}

// on is "block i runs on device d": one of its options that holds d.
func (e *assignedEncoding) on(i, d int) z3.Bool {
	var lits []z3.Bool
	for o, g := range e.p.DeviceOptions(i) {
		for _, dv := range g {
			if dv == d {
				lits = append(lits, e.choose[i][o])
			}
		}
	}
	if len(lits) == 0 {
		return e.x.False()
	}
	return e.x.Or(lits...)
}

// memory adds memory (eq 10): right after every instance that allocates
// on a device, the instances on it so far fit its budget.
func (e *assignedEncoding) memory(s *z3.Solver, memory int) {
	x, p, n, k := e.x, e.p, e.n, e.p.K()
	for d := range p.Devices {
		budget := p.Budget(d, memory)
		if budget <= 0 {
			continue
		}
		for j := range k {
			mj := p.Blocks[j].Memory
			if mj <= 0 {
				continue
			}
			if mj > budget {
				s.Assert(x.Not(e.on(j, d)))
				continue
			}
			for l := range n {
				var terms []z3.Int
				for i := range k {
					mi := p.Blocks[i].Memory
					if mi == 0 {
						continue
					}
					for m := range n {
						if i == j && m == l {
							continue
						}
						known, val := e.before(i, m, j, l)
						var first z3.Bool
						switch {
						case known && !val:
							continue
						case known:
							first = e.on(i, d)
						default:
							if !canShare(p, i, j, d) {
								continue
							}
							first = x.And(e.on(i, d), e.lit(i, m, j, l))
						}
						terms = append(terms, x.Ite(first, x.IntVal(mi), x.IntVal(0)))
					}
				}
				if len(terms) == 0 {
					continue
				}
				s.Assert(x.Implies(e.on(j, d), x.Le(x.Add(terms...), x.IntVal(budget-mj))))
			}
		}
	}
}

// canShare reports whether blocks i and j may both run on device d.
func canShare(p *placement.Placement, i, j, d int) bool {
	has := func(b int) bool {
		for _, g := range p.DeviceOptions(b) {
			for _, x := range g {
				if x == d {
					return true
				}
			}
		}
		return false
	}
	return has(i) && has(j)
}

// reachability is reach[i][j]: a path of dependencies leads from block i
// to block j (i ≠ j).
func reachability(p *placement.Placement) [][]bool {
	order, _ := p.Topo()
	succs := p.Succs()
	reach := make([][]bool, p.K())
	for i := range reach {
		reach[i] = make([]bool, p.K())
	}
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		for _, j := range succs[i] {
			reach[i][j] = true
			for t, r := range reach[j] {
				reach[i][t] = reach[i][t] || r
			}
		}
	}
	return reach
}

// read is the choice, the instances and the makespan of a model.
func (e *assignedEncoding) read(m *z3.Model) ([]int, []schedule.Instance, int, error) {
	p := e.p
	choice := make([]int, p.K())
	for i := range choice {
		choice[i] = -1
		for o, b := range e.choose[i] {
			v, err := m.Bool(b)
			if err != nil {
				return nil, nil, 0, err
			}
			if v {
				choice[i] = o
			}
		}
		if choice[i] < 0 {
			return nil, nil, 0, fmt.Errorf("smt: no option chosen for block %d (encoder bug)", i)
		}
	}
	var ins []schedule.Instance
	ms := 0
	for mb := range e.n {
		for i := range p.K() {
			st, err := m.Int(e.start[mb][i])
			if err != nil {
				return nil, nil, 0, err
			}
			ins = append(ins, schedule.Instance{Block: i, Micro: mb, Start: st})
			ms = max(ms, st+p.OptionTime(i, choice[i]))
		}
	}
	return choice, ins, ms, nil
}
