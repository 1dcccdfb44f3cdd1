package construct

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/z3"
)

// steadyState asks the solver for a modulo schedule of u micro-batches
// at period P that decides keep or offload per instance, exactly: every
// block of the u copies starts in [0, L − time], copy 0's first block at
// 0 and copy c's first block in [copy c−1's, P); a device runs one block
// at a time modulo P; an offloaded activation moves out after its
// forward ends and back before its consumer starts, each move on the
// device's host channel, one at a time modulo P; and a device's memory at
// every time of the steady state (an activation from its forward's start
// to its offload's end and from its reload's start to its freeing block's
// start, summed over the copies and the periods) is within the budget.
// It is what ModuloDecide searches by annealing, with every choice free;
// fixed, when given, pins the starts and decisions to a repetend. It
// answers the solver's status within limit. Blocks of time 1 only.
func steadyState(t *testing.T, u, P, L, memory int, fixed *Decided, limit time.Duration) z3.Status {
	t.Helper()
	p := vOffload(t, 8)
	st := newDecideState(p, u)
	k, nops := st.k, len(st.dev)
	freeOf := slices.Repeat([]int{-1}, k)
	for g, f := range p.Pairs() {
		if f >= 0 && p.Blocks[g].Memory < 0 {
			freeOf[f] = g
		}
	}
	x := z3.NewContext()
	defer x.Close()
	var as []z3.Bool
	add := func(b ...z3.Bool) { as = append(as, b...) }
	// mod is v's residue modulo P.
	mod := func(name string, v z3.Int) z3.Int {
		r, q := x.IntVar(name+"r"), x.IntVar(name+"q")
		add(x.Eq(v, x.Add(r, x.Scale(P, q))), x.Ge(r, x.IntVal(0)), x.Lt(r, x.IntVal(P)), x.Ge(q, x.IntVal(0)))
		return r
	}
	s, r := make([]z3.Int, nops), make([]z3.Int, nops)
	for i := range nops {
		if st.time[i] != 1 {
			t.Fatalf("block %d of time %d", i%k, st.time[i])
		}
		s[i] = x.IntVar(fmt.Sprint("s", i))
		add(x.Ge(s[i], x.IntVal(0)), x.Le(x.Plus(s[i], 1), x.IntVal(L)))
		r[i] = mod(fmt.Sprint("s", i), s[i])
		for _, d := range st.preds[i] {
			add(x.Ge(s[i], x.Plus(s[d.op], d.lag)))
		}
		if fixed != nil {
			add(x.Eq(s[i], x.IntVal(fixed.Starts[i])))
		}
	}
	if fixed == nil {
		add(x.Eq(s[0], x.IntVal(0)))
		for c := 1; c < u; c++ {
			add(x.Lt(s[c*k], x.IntVal(P)), x.Ge(s[c*k], s[(c-1)*k]))
		}
	}
	for _, ops := range st.on {
		for a := range ops {
			for b := a + 1; b < len(ops); b++ {
				add(x.Not(x.Eq(r[ops[a]], r[ops[b]])))
			}
		}
	}
	type act struct {
		op, free, move int
		o              z3.Bool
		a, b, ra, rb   z3.Int
	}
	perDev := make([][]act, p.Devices)
	for i := range nops {
		if st.consumer[i] < 0 {
			if p.Blocks[i%k].Memory > 0 {
				t.Fatalf("block %d holds memory and may not be offloaded", i%k)
			}
			continue
		}
		if freeOf[i%k] < 0 {
			t.Fatalf("block %d: nothing frees its activation", i%k)
		}
		ac := act{op: i, free: i/k*k + freeOf[i%k], move: st.move[i], o: x.BoolVar(fmt.Sprint("o", i)),
			a: x.IntVar(fmt.Sprint("a", i)), b: x.IntVar(fmt.Sprint("b", i))}
		ac.ra, ac.rb = mod(fmt.Sprint("a", i), ac.a), mod(fmt.Sprint("b", i), ac.b)
		add(x.Implies(ac.o, x.And(x.Ge(ac.a, x.Plus(s[i], 1)), x.Ge(ac.b, x.Plus(ac.a, ac.move)), x.Le(x.Plus(ac.b, ac.move), s[st.consumer[i]]))))
		if fixed != nil {
			if fixed.Offload[i] >= 0 {
				add(ac.o, x.Eq(ac.a, x.IntVal(fixed.Offload[i])), x.Eq(ac.b, x.IntVal(fixed.Reload[i])))
			} else {
				add(x.Not(ac.o))
			}
		}
		perDev[st.dev[i]] = append(perDev[st.dev[i]], ac)
	}
	// apart: moves of m steps starting at residues r1 and r2 do not
	// overlap modulo P.
	apart := func(r1, r2 z3.Int, m int) z3.Bool {
		d := x.Sub(r1, r2)
		return x.Or(x.And(x.Ge(d, x.IntVal(m)), x.Le(d, x.IntVal(P-m))), x.And(x.Le(d, x.IntVal(-m)), x.Ge(d, x.IntVal(m-P))))
	}
	for d, acts := range perDev {
		for j, a1 := range acts {
			if a1.move != acts[0].move || st.channelOf[d] != d {
				t.Fatalf("device %d: moves of several times or a shared host channel", d)
			}
			add(x.Implies(a1.o, apart(a1.ra, a1.rb, a1.move)))
			for _, a2 := range acts[j+1:] {
				add(x.Implies(x.And(a1.o, a2.o), x.And(apart(a1.ra, a2.ra, a1.move), apart(a1.ra, a2.rb, a1.move),
					apart(a1.rb, a2.ra, a1.move), apart(a1.rb, a2.rb, a1.move))))
			}
		}
		// Two cuts the constraints below imply, which spare the solver
		// most of its search (at period 14 within 40 steps: 0.6 CPU
		// seconds with them, 38 without): a period's moves fit its P
		// steps of channel, and its memory-steps (the stays of its
		// copies' activations) the budget times P.
		var outs []z3.Bool
		var steps []int
		var area []z3.Int
		for _, ac := range acts {
			outs, steps = append(outs, ac.o), append(steps, 2*ac.move)
			stay := x.Sub(x.Sub(s[ac.free], s[ac.op]), x.Ite(ac.o, x.Sub(ac.b, x.Plus(ac.a, ac.move)), x.IntVal(0)))
			area = append(area, x.Scale(p.Blocks[ac.op%k].Memory, stay))
		}
		add(x.PbLe(outs, steps, P), x.Le(x.Add(area...), x.IntVal(p.Budget(d, memory)*P)))
		for res := range P {
			var on []z3.Bool
			var units []int
			for tau := res; tau < L; tau += P {
				tv := x.IntVal(tau)
				for _, ac := range acts {
					held := x.And(x.Le(s[ac.op], tv), x.Lt(tv, s[ac.free]))
					away := x.And(ac.o, x.Le(x.Plus(ac.a, ac.move), tv), x.Lt(tv, ac.b))
					on = append(on, x.And(held, x.Not(away)))
					units = append(units, p.Blocks[ac.op%k].Memory)
				}
			}
			add(x.PbLe(on, units, p.Budget(d, memory)))
		}
	}
	sv, err := x.NewSolver(z3.SolverOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	sv.Assert(as...)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	status, err := sv.Check(ctx)
	if err != nil && status != z3.Unknown {
		t.Fatal(err)
	}
	return status
}

// TestSteadyStateMemory3 pins what docs/memory-experiment.md says of
// offload alone at memory 3 on the split V placement of 8 devices (moves
// of 2, 16 micro-batches, PipeOffload's 171, the 20 % mark 136): no
// modulo schedule of 2 micro-batches that decides, at period 14, has a
// repetend of at most 40 steps (7 periods and the repetend: 138 unrolled,
// 136 at 38), checked exactly; with memory 16 one does, so memory is what
// rules it out. Steady states of one micro-batch at memory 3 run at
// period 8, not 7 (within 40 steps): the rate of the search's schedules
// of 32 and 64 micro-batches, where device 7 moves both its activations.
// The encoding accepts the repetend ModuloDecide's annealing finds at
// memory 4 (period 13), so it does not refuse what the verifier takes.
func TestSteadyStateMemory3(t *testing.T) {
	testskip.Short(t, "exact checks of steady states on 8 devices")
	for _, c := range []struct {
		u, period, span, memory int
		want                    z3.Status
		limit                   time.Duration
	}{
		{2, 14, 40, 3, z3.Unsat, 2 * time.Minute}, {2, 14, 40, 16, z3.Sat, 2 * time.Minute},
		{1, 7, 40, 3, z3.Unsat, 2 * time.Minute}, {1, 8, 40, 3, z3.Sat, 5 * time.Minute},
	} {
		if got := steadyState(t, c.u, c.period, c.span, c.memory, nil, c.limit); got != c.want {
			t.Errorf("%d micro-batches, memory %d, period %d, span %d: %v, want %v", c.u, c.memory, c.period, c.span, got, c.want)
		}
	}
	p := vOffload(t, 8)
	sh := decideShapes[1]
	st := newDecideState(p, sh.Unroll)
	P := slices.Max(st.load) + sh.Extra
	fit, _ := st.anneal(context.Background(), P, sh.start(p, st, P), 4, sh.annealing)
	if fit == nil {
		t.Fatalf("memory 4: no repetend fits at period %d", P)
	}
	if got := steadyState(t, sh.Unroll, P, latency(st, fit.Starts), 4, fit, 2*time.Minute); got != z3.Sat {
		t.Errorf("memory 4: the annealed repetend of period %d: %v, want sat", P, got)
	}
}
