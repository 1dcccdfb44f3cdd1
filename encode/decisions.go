package encode

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
	"github.com/tessel-pp/tessel/z3"
)

// save is one forward instance whose activation the encoding may offload
// or recompute.
type save struct {
	ref       schedule.Ref
	task, use int // the forward's task and its consumer's
	amountOff int // memory an offload frees
	amountRec int // memory a recompute frees
	move      int // offload time (0: not offloadable)
	channels  []int
	recompute bool
	devices   []int
	time      int // the forward's time (a recompute's)

	off, rec   z3.Bool // the decisions
	o, r, g    z3.Int  // offload start, reload start, recompute start
	hasO, hasR bool
}

// OptimalDecisions is the time-optimal schedule of the spec's
// micro-batches where every forward instance that its block allows may
// also be offloaded or recomputed, as the spec's Allowed says (Qi et al., "OptPipe",
// Appendix C, eqs 9–19, with the memory of verify.Schedule): a Boolean
// per instance and decision, the offload, reload and recompute starts as
// integers, one transfer at a time on each host channel, a recompute
// exclusive on its devices like a block, and each device's memory
// checked exactly at every start of a block that allocates and at every
// reload or recompute start, counting the frees and returns before it in
// the verifier's memory phases. Micro-batches are not forced into order
// (a decision is tied to its instance, so property 4.1's relabelling does
// not apply).
//
// seed, when given, is a verified schedule of the same problem whose
// makespan is the first upper bound. The schedule returned is the best
// found, with its decisions; callers verify it (verify.Schedule).
//
// Under the spec's latency budget (0: none) the rule of every micro-batch
// is in the encoding (LatencyDeadlines: a micro-batch's latency counts its
// blocks, between which its decisions lie), the budget recorded in the
// schedule; a seed must meet it.
func OptimalDecisions(ctx context.Context, sp spec.Spec, seed *schedule.Schedule, opt smt.Options) (*schedule.Schedule, *smt.Solution, error) {
	p, n, memory, latency, d := sp.Placement, sp.MicroBatches, sp.Memory, sp.Latency, sp.Allowed
	refs := AllInstances(sp)
	prob := InstanceProblem(spec.New(p, n), refs, nil)
	// Memory is encoded below, with the decisions; micro-batches are not
	// ordered (see the doc).
	prob.Before, prob.Memory, prob.Entry = nil, 0, nil
	if latency > 0 {
		prob.Deadlines = LatencyDeadlines(sp, refs)
	}
	sol := &smt.Solution{LowerBound: max(prob.LowerBound(), rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: memory}).Makespan)}
	var best *schedule.Schedule
	if seed != nil && seed.Latency == max(latency, 0) && verify.Schedule(seed) == nil {
		best = seed
	}
	if best != nil && schedule.Makespan(best) <= sol.LowerBound {
		sol.Makespan, sol.Proven = schedule.Makespan(best), true
		return best, sol, nil
	}
	x, s, err := z3.NewSolving(z3.SolverOptions{Seed: opt.Seed, Effort: opt.Effort})
	if err != nil {
		return nil, nil, err
	}
	defer x.Close()
	e, err := smt.Encode(x, s, prob, nil)
	if err != nil {
		return nil, nil, err
	}
	saves := encodeSaves(e, spec.Spec{Placement: p, Memory: memory, Allowed: d}, refs, nil)
	if err := x.Err(); err != nil {
		return nil, nil, err
	}
	probe := func(bound int) (z3.Status, error) {
		return smt.ProbeMakespan(ctx, s, &sol.Checks, bound, e.BoundMakespan, func(m *z3.Model) error {
			got, err := decodeSaves(e, m, spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, refs, saves)
			if err != nil {
				return err
			}
			got.Latency = max(latency, 0)
			if err := verify.Schedule(got); err != nil {
				return fmt.Errorf("smt: solver model fails verification (encoder bug): %w", err)
			}
			if best == nil || schedule.Makespan(got) < schedule.Makespan(best) {
				best = got
			}
			return nil
		})
	}
	if best == nil {
		st, err := probe(-1)
		switch {
		case err != nil:
			return nil, nil, err
		case st == z3.Unsat:
			return nil, nil, fmt.Errorf("placement %q, %d micro-batches, memory %d: %w", p.Name, n, memory, smt.ErrInfeasible)
		case best == nil:
			return nil, nil, fmt.Errorf("placement %q, %d micro-batches, memory %d: %w", p.Name, n, memory, z3.ErrInterrupted)
		}
	}
	lo, hi, err := smt.BisectMakespan(sol.LowerBound, schedule.Makespan(best), opt.Progress, probe, func() int { return schedule.Makespan(best) })
	if err != nil {
		return nil, nil, err
	}
	sol.Makespan = schedule.Makespan(best)
	sol.LowerBound = max(sol.LowerBound, lo)
	sol.Proven = lo >= hi
	return best, sol, nil
}

// encodeSaves adds the decisions, their timing, the host channels, the
// recomputes' devices and the memory of every device to e (whose
// Problem has no memory budget of its own). The
// placement, budget and decisions allowed are sp's.
//
// pin, when set, may hold a save's decision before its variables are made
// (WindowDecisions): it returns true when it has set the save's off, rec,
// hasO, hasR and, where they are held too, its o, r and g itself.
func encodeSaves(e *smt.Encoder, sp spec.Spec, refs []schedule.Ref, pin func(*save) bool) []*save {
	p, memory, d := sp.Placement, sp.Memory, sp.Allowed
	x, s := e.X, e.S
	consumers := p.Consumers()
	idx := map[schedule.Ref]int{}
	for k, r := range refs {
		idx[r] = k
	}
	// Saves in (block, micro-batch) order: the verifier's order of
	// returns at one time.
	var saves []*save
	for i := range p.Blocks {
		off := d.Offload && p.Offloadable(i, consumers)
		rec := d.Recompute && p.Recomputable(i, consumers)
		if !off && !rec {
			continue
		}
		for m := 0; ; m++ {
			t, ok := idx[schedule.Ref{Block: i, Micro: m}]
			if !ok {
				break
			}
			sv := &save{ref: schedule.Ref{Block: i, Micro: m}, task: t, use: idx[schedule.Ref{Block: consumers[i], Micro: m}],
				amountOff: p.Freed(i, placement.Offload), amountRec: p.Freed(i, placement.Recompute),
				devices: p.Blocks[i].Devices, time: p.Blocks[i].Time, recompute: rec}
			if off {
				sv.move, sv.channels = p.OffloadTime(i), p.BlockSwitches(i)
			}
			saves = append(saves, sv)
		}
	}
	end := func(t int) z3.Int { return x.Plus(e.Start[t], e.P.Tasks[t].Time) }
	for k, sv := range saves {
		sv.off, sv.rec = x.False(), x.False()
		if pin != nil && pin(sv) {
			continue
		}
		if sv.move > 0 {
			sv.off = x.BoolVar(fmt.Sprintf("off%d", k))
			sv.o, sv.r = x.IntVar(fmt.Sprintf("oo%d", k)), x.IntVar(fmt.Sprintf("or%d", k))
			sv.hasO = true
			s.Assert(x.Implies(sv.off, x.And(
				x.Ge(sv.o, end(sv.task)),
				x.Ge(sv.r, x.Plus(sv.o, sv.move)),
				x.Le(x.Plus(sv.r, sv.move), e.Start[sv.use]))))
		}
		if sv.recompute {
			sv.rec = x.BoolVar(fmt.Sprintf("rec%d", k))
			sv.g = x.IntVar(fmt.Sprintf("og%d", k))
			sv.hasR = true
			s.Assert(x.Implies(sv.rec, x.And(
				x.Ge(sv.g, end(sv.task)),
				x.Le(x.Plus(sv.g, sv.time), e.Start[sv.use]))))
			if sv.hasO {
				s.Assert(x.Not(x.And(sv.off, sv.rec)))
			}
			// A recompute is a block on the forward's devices.
			for t := range e.P.Tasks {
				if t == sv.task || !e.P.Tasks[t].SharesAny(sv.devices) {
					continue
				}
				s.Assert(x.Implies(sv.rec, x.Or(x.Le(x.Plus(sv.g, sv.time), e.Start[t]), x.Le(end(t), sv.g))))
			}
		}
	}
	for a, u := range saves {
		for _, v := range saves[a+1:] {
			if u.hasR && v.hasR && sharesDevice(u.devices, v.devices) {
				s.Assert(x.Implies(x.And(u.rec, v.rec), x.Or(x.Le(x.Plus(u.g, u.time), v.g), x.Le(x.Plus(v.g, v.time), u.g))))
			}
			if u.hasO && v.hasO && sharesDevice(u.channels, v.channels) {
				both := x.And(u.off, v.off)
				for _, mu := range []z3.Int{u.o, u.r} {
					for _, mv := range []z3.Int{v.o, v.r} {
						s.Assert(x.Implies(both, x.Or(x.Le(x.Plus(mu, u.move), mv), x.Le(x.Plus(mv, v.move), mu))))
					}
				}
			}
		}
	}
	for dev := 0; dev < p.Devices; dev++ {
		if b := p.Budget(dev, memory); b > 0 {
			encodeDeviceMemory(e, dev, b, saves)
		}
	}
	return saves
}

// encodeDeviceMemory bounds device dev's running memory under budget
// right after every change that raises it: a block start that allocates
// (counting the blocks before it, the frees at or before its time and the
// returns before it) and a reload or recompute start (counting the block
// starts at or before its time, the frees at or before it, and the
// returns before it or at its time and earlier in the verifier's order).
func encodeDeviceMemory(e *smt.Encoder, dev, budget int, saves []*save) {
	x, s, pr := e.X, e.S, e.P
	var on []int
	for t := range pr.Tasks {
		if pr.Tasks[t].On(dev) && pr.Tasks[t].Memory != 0 {
			on = append(on, t)
		}
	}
	var mine []*save
	for _, sv := range saves {
		if sharesDevice(sv.devices, []int{dev}) {
			mine = append(mine, sv)
		}
	}
	zero := x.IntVal(0)
	// frees and returns as of a point: the terms of every save.
	decisionTerms := func(at z3.Int, at0 func(*save) z3.Bool, self *save, selfBefore bool) []z3.Int {
		var terms []z3.Int
		for k, sv := range mine {
			if sv.hasO {
				freed := x.And(sv.off, x.Le(x.Plus(sv.o, sv.move), at))
				terms = append(terms, x.Ite(freed, x.IntVal(-sv.amountOff), zero))
				var back z3.Bool
				switch {
				case sv == self:
					back = x.True()
				case self != nil && selfBefore && k < indexOf(mine, self):
					back = x.Le(sv.r, at)
				default:
					back = x.Lt(sv.r, at)
				}
				terms = append(terms, x.Ite(x.And(sv.off, back), x.IntVal(sv.amountOff), zero))
			}
			if sv.hasR {
				terms = append(terms, x.Ite(x.And(sv.rec, at0(sv)), x.IntVal(-sv.amountRec), zero))
				var back z3.Bool
				switch {
				case sv == self:
					back = x.True()
				case self != nil && selfBefore && k < indexOf(mine, self):
					back = x.Le(sv.g, at)
				default:
					back = x.Lt(sv.g, at)
				}
				terms = append(terms, x.Ite(x.And(sv.rec, back), x.IntVal(sv.amountRec), zero))
			}
		}
		return terms
	}
	// At every block start that allocates.
	for _, j := range on {
		mj := pr.Tasks[j].Memory
		if mj <= 0 {
			continue
		}
		terms := []z3.Int{x.IntVal(mj)}
		for _, i := range on {
			if i == j {
				continue
			}
			lit, known, val := e.OrderOf(i, j)
			switch {
			case known && val:
				terms = append(terms, x.IntVal(pr.Tasks[i].Memory))
			case known:
			default:
				terms = append(terms, x.Ite(lit, x.IntVal(pr.Tasks[i].Memory), zero))
			}
		}
		recFreed := func(sv *save) z3.Bool { // the forward ended by j's start
			if sv.task == j {
				return x.False()
			}
			return x.Le(x.Plus(e.Start[sv.task], sv.time), e.Start[j])
		}
		terms = append(terms, decisionTerms(e.Start[j], recFreed, nil, false)...)
		s.Assert(x.Le(x.Add(terms...), x.IntVal(budget)))
	}
	// At every reload and recompute start.
	for _, self := range mine {
		for _, kind := range []bool{true, false} { // offload's reload, recompute
			var at z3.Int
			var active z3.Bool
			switch {
			case kind && self.hasO:
				at, active = self.r, self.off
			case !kind && self.hasR:
				at, active = self.g, self.rec
			default:
				continue
			}
			var terms []z3.Int
			for _, i := range on {
				terms = append(terms, x.Ite(x.Le(e.Start[i], at), x.IntVal(pr.Tasks[i].Memory), zero))
			}
			recFreed := func(sv *save) z3.Bool {
				return x.Le(x.Plus(e.Start[sv.task], sv.time), at)
			}
			// The other kind of the same save is inactive (never both).
			terms = append(terms, decisionTerms(at, recFreed, self, true)...)
			s.Assert(x.Implies(active, x.Le(x.Add(terms...), x.IntVal(budget))))
		}
	}
}

func indexOf(list []*save, sv *save) int {
	for k, v := range list {
		if v == sv {
			return k
		}
	}
	return -1
}

func sharesDevice(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// decodeSaves reads a schedule with its decisions from a model.
func decodeSaves(e *smt.Encoder, m *z3.Model, sp spec.Spec, refs []schedule.Ref, saves []*save) (*schedule.Schedule, error) {
	starts, err := e.Starts(m)
	if err != nil {
		return nil, err
	}
	out := &schedule.Schedule{Spec: spec.Spec{Placement: sp.Placement, MicroBatches: sp.MicroBatches, Memory: sp.Memory}}
	for k, r := range refs {
		out.Instances = append(out.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: starts[k]})
	}
	for _, sv := range saves {
		if sv.hasO {
			on, err := m.Bool(sv.off)
			if err != nil {
				return nil, err
			}
			if on {
				o, err := m.Int(sv.o)
				if err != nil {
					return nil, err
				}
				r, err := m.Int(sv.r)
				if err != nil {
					return nil, err
				}
				out.Decisions = append(out.Decisions, schedule.Decision{Block: sv.ref.Block, Micro: sv.ref.Micro, Action: placement.Offload, Start: o, Reload: r})
				continue
			}
		}
		if sv.hasR {
			on, err := m.Bool(sv.rec)
			if err != nil {
				return nil, err
			}
			if on {
				g, err := m.Int(sv.g)
				if err != nil {
					return nil, err
				}
				out.Decisions = append(out.Decisions, schedule.Decision{Block: sv.ref.Block, Micro: sv.ref.Micro, Action: placement.Recompute, Start: g})
			}
		}
	}
	out.Sort()
	return out, nil
}
