package encode

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// The repetend whose forward blocks may offload or recompute their
// activation (placement's "Memory as a decision"; Qi et al., "OptPipe:
// Memory- and Scheduling-Optimized Pipeline Parallelism for LLM
// Training", Appendix C), the same decision in every iteration; package
// repetend searches it (SearchDecided).

// decidedBlock is the per-block state of the encoding.
type decidedBlock struct {
	i, consumer int
	move        int // offload time; 0: not offloadable
	chans       []int
	recompute   bool
	off, rec    z3.Bool
	o, r, g     z3.Int
}

// DecidedIteration is an iteration of a repetend whose forward blocks
// may offload or recompute their activation, the same decision in every
// iteration. Times are in the iteration's frame, as Starts: iteration k
// offloads block i's activation at Offload[i] + k·Period; its reload and
// recompute are in the frame of the consumer's iteration, at Reload[i]
// or Recompute[i] + k'·Period, k' = k + Offsets[i] − Offsets[consumer].
type DecidedIteration struct {
	Iteration
	Actions   []placement.Action // per block: Keep, Offload or Recompute
	Offload   []int              // per block: offload start, when offloaded
	Reload    []int              // per block: reload start, when offloaded
	Recompute []int              // per block: recompute start, when recomputed
}

// DecidedAt looks for a repetend of sp's placement at period P whose
// per-block decisions (keep, and offload or recompute where sp.Allowed
// and the placement allow them) fit sp's memory budget in the steady
// state, with the offsets and the decisions as variables (Joint's
// encoding) and, per device, memory counted across iterations with every
// offload and recompute (encodeDecided): nil, nil when none exists. The
// placement's links must not carry one transfer at a time, and no
// micro-batch may leave memory behind (the caller checks).
func DecidedAt(ctx context.Context, sp spec.Spec, P int, opt RepetendOptions) (_ *DecidedIteration, err error) {
	p := sp.Placement
	e, err := offsetsEncoder(p, opt)
	if err != nil {
		return nil, err
	}
	x, s := e.X, e.S
	defer x.Close()
	period := x.IntVal(P)
	offsets, _ := assertOffsets(e, p, P, opt.MaxNR)
	windows := deviceWindows(e, p, period)
	blocks := encodeDecided(e, sp, P, offsets, windows)
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("repetend: decided problem at period %d: %w", P, err)
	}
	status, err := s.Check(ctx)
	if err != nil {
		return nil, err
	}
	if status != z3.Sat {
		return nil, nil
	}
	m, err := s.Model()
	if err != nil {
		return nil, err
	}
	defer m.Close()
	offs := make([]int, len(p.Blocks))
	for i, n := range offsets {
		if offs[i], err = m.Int(n); err != nil {
			return nil, err
		}
	}
	starts, err := e.Starts(m)
	if err != nil {
		return nil, err
	}
	lo := starts[0]
	for _, v := range starts {
		lo = min(lo, v)
	}
	k := len(p.Blocks)
	out := &DecidedIteration{Iteration: Iteration{Offsets: offs, Period: P, Starts: normalise(starts)},
		Actions: make([]placement.Action, k), Offload: make([]int, k), Reload: make([]int, k), Recompute: make([]int, k)}
	for i := range out.Actions {
		out.Actions[i] = placement.Keep
	}
	for _, b := range blocks {
		if b.move > 0 {
			on, err := m.Bool(b.off)
			if err != nil {
				return nil, err
			}
			if on {
				o, err := m.Int(b.o)
				if err != nil {
					return nil, err
				}
				r, err := m.Int(b.r)
				if err != nil {
					return nil, err
				}
				out.Actions[b.i], out.Offload[b.i], out.Reload[b.i] = placement.Offload, o-lo, r-lo
				continue
			}
		}
		if b.recompute {
			on, err := m.Bool(b.rec)
			if err != nil {
				return nil, err
			}
			if on {
				g, err := m.Int(b.g)
				if err != nil {
					return nil, err
				}
				out.Actions[b.i], out.Recompute[b.i] = placement.Recompute, g-lo
			}
		}
	}
	return out, nil
}

// encodeDecided adds the decisions of a repetend at period P to e, in
// placement's rules (EarliestOffload, LatestReload, the host channels,
// Freed, the memory phases) made periodic:
//
//   - an offload starts after its forward ends (same frame), its reload
//     ends before the consumer starts (consumer's frame) and starts after
//     the offload ends (o + T ≤ r + Δ·P, Δ = n_i − n_consumer);
//   - every host channel's moves of one iteration lie in a window of
//     length P and never overlap (so no two iterations' moves do);
//   - a recompute runs after the forward ends and ends before the
//     consumer starts, inside its device's window, apart from every block
//     and every other recompute there;
//   - memory, per device, at every start of a block that allocates and at
//     every reload and recompute start: Σ_j m_j·N_j(t) less what is on
//     the host or dropped, where N_j(t) = ⌊(t − s_j)/P⌋ + n_j + 1 counts
//     the instances of block j started by t and an offloaded block's
//     micro-batches away at t number ⌊(t − o − T)/P⌋ − ⌊(t − r)/P⌋ + Δ
//     (frees count before block starts, returns after them, as in the
//     verifier's phases).
func encodeDecided(e *smt.Encoder, sp spec.Spec, P int, offsets []z3.Int, windows []*z3.Int) []*decidedBlock {
	p := sp.Placement
	x, s := e.X, e.S
	consumers := p.Consumers()
	var blocks []*decidedBlock
	for i := range p.Blocks {
		off := sp.Allowed.Offload && p.Offloadable(i, consumers)
		rec := sp.Allowed.Recompute && p.Recomputable(i, consumers)
		if (!off && !rec) || len(p.Blocks[i].Devices) != 1 {
			continue // a block on several devices keeps its activation here
		}
		b := &decidedBlock{i: i, consumer: consumers[i], recompute: rec, off: x.False(), rec: x.False()}
		if off {
			b.move, b.chans = p.OffloadTime(i), p.BlockSwitches(i)
		}
		blocks = append(blocks, b)
	}
	end := func(i int) z3.Int { return x.Plus(e.Start[i], p.Blocks[i].Time) }
	shift := func(b *decidedBlock) z3.Int { // Δ·P
		return x.Scale(P, x.Sub(offsets[b.i], offsets[b.consumer]))
	}
	for k, b := range blocks {
		if b.move > 0 {
			b.off = x.BoolVar(fmt.Sprintf("doff%d", k))
			b.o, b.r = x.IntVar(fmt.Sprintf("do%d", k)), x.IntVar(fmt.Sprintf("dr%d", k))
			s.Assert(x.Implies(b.off, x.And(
				x.Ge(b.o, end(b.i)),
				x.Ge(x.Add(b.r, shift(b)), x.Plus(b.o, b.move)),
				x.Le(x.Plus(b.r, b.move), e.Start[b.consumer]))))
		}
		if b.recompute {
			b.rec = x.BoolVar(fmt.Sprintf("drec%d", k))
			b.g = x.IntVar(fmt.Sprintf("dg%d", k))
			t := p.Blocks[b.i].Time
			s.Assert(x.Implies(b.rec, x.And(
				x.Ge(x.Add(b.g, shift(b)), end(b.i)),
				x.Le(x.Plus(b.g, t), e.Start[b.consumer]))))
			if b.move > 0 {
				s.Assert(x.Not(x.And(b.off, b.rec)))
			}
			for _, d := range p.Blocks[b.i].Devices {
				if w := windows[d]; w != nil {
					s.Assert(x.Implies(b.rec, x.And(x.Le(*w, b.g), x.Le(x.Plus(b.g, t), x.Plus(*w, P)))))
				}
				for j := range p.Blocks {
					if p.OnDevice(j, d) {
						s.Assert(x.Implies(b.rec, x.Or(x.Le(x.Plus(b.g, t), e.Start[j]), x.Le(end(j), b.g))))
					}
				}
			}
		}
	}
	// Recomputes apart on shared devices.
	for a, u := range blocks {
		for _, v := range blocks[a+1:] {
			if u.recompute && v.recompute && sharesDevice(p.Blocks[u.i].Devices, p.Blocks[v.i].Devices) {
				tu, tv := p.Blocks[u.i].Time, p.Blocks[v.i].Time
				s.Assert(x.Implies(x.And(u.rec, v.rec), x.Or(x.Le(x.Plus(u.g, tu), v.g), x.Le(x.Plus(v.g, tv), u.g))))
			}
		}
	}
	// Host channels: one window of length P per channel, moves apart.
	type move struct {
		at z3.Int
		on z3.Bool
		t  int
	}
	byChan := map[int][]move{}
	var chans []int
	for _, b := range blocks {
		if b.move <= 0 {
			continue
		}
		for _, c := range b.chans {
			if _, ok := byChan[c]; !ok {
				chans = append(chans, c)
			}
			byChan[c] = append(byChan[c], move{b.o, b.off, b.move}, move{b.r, b.off, b.move})
		}
	}
	for _, c := range chans {
		w := x.IntVar(fmt.Sprintf("dh%d", c))
		ms := byChan[c]
		for k, u := range ms {
			s.Assert(x.Implies(u.on, x.And(x.Le(w, u.at), x.Le(x.Plus(u.at, u.t), x.Plus(w, P)))))
			for _, v := range ms[k+1:] {
				s.Assert(x.Implies(x.And(u.on, v.on), x.Or(x.Le(x.Plus(u.at, u.t), v.at), x.Le(x.Plus(v.at, v.t), u.at))))
			}
		}
	}
	enc := decidedEncoding{e: e, p: p, P: P, offsets: offsets, blocks: blocks}
	for d := 0; d < p.Devices; d++ {
		if b := p.Budget(d, sp.Memory); b > 0 && windows[d] != nil {
			enc.memory(d, b, *windows[d])
		}
	}
	return blocks
}

// decidedEncoding is what the memory bounds of encodeDecided read: its
// encoder, placement, period, offsets and the blocks that may decide.
type decidedEncoding struct {
	e       *smt.Encoder
	p       *placement.Placement
	P       int
	offsets []z3.Int
	blocks  []*decidedBlock
}

// memory bounds device d's memory under budget at every point
// where it rises (see encodeDecided). Every point is taken into d's window
// [w, w + P): an offload's end a = â + α·P and a reload's start
// r = r̂ + β·P with â, r̂ in the window and α, β integers, so that every
// ⌊(t − u)/P⌋ of two points in the window is 0 or −1 (an Ite) and the
// count of micro-batches away is Ite terms and α, β, Δ — no division.
func (de decidedEncoding) memory(d, budget int, w z3.Int) {
	e, p, P, offsets, blocks := de.e, de.p, de.P, de.offsets, de.blocks
	x, s := e.X, e.S
	var on []int
	for j, b := range p.Blocks {
		if b.Memory != 0 && p.OnDevice(j, d) {
			on = append(on, j)
		}
	}
	zero, minus := x.IntVal(0), x.IntVal(-1)
	// fl is ⌊(t − u)/P⌋ for t, u in the window: u ≤ t, or with strict,
	// u < t (a return at t comes after the block that starts at t).
	fl := func(t, u z3.Int, strict bool) z3.Int {
		c := x.Le(u, t)
		if strict {
			c = x.Lt(u, t)
		}
		return x.Ite(c, zero, minus)
	}
	inWindow := func(name string, v z3.Int) (hat, k z3.Int) {
		hat, k = x.IntVar(name+"h"), x.IntVar(name+"k")
		s.Assert(x.Eq(v, x.Add(hat, x.Scale(P, k))), x.Le(w, hat), x.Lt(hat, x.Plus(w, P)))
		return hat, k
	}
	type away struct {
		on     z3.Bool
		amount int
		from   z3.Int // in the window: when the memory leaves
		fromK  z3.Int // periods to add to from
		back   z3.Int // in the window: when it returns
		backK  z3.Int
		delta  z3.Int
	}
	var aways []away
	for k, b := range blocks {
		if !p.OnDevice(b.i, d) {
			continue
		}
		delta := x.Sub(offsets[b.i], offsets[b.consumer])
		if b.move > 0 {
			ah, ak := inWindow(fmt.Sprintf("da%d_%d", d, k), x.Plus(b.o, b.move))
			rh, rk := inWindow(fmt.Sprintf("db%d_%d", d, k), b.r)
			aways = append(aways, away{on: b.off, amount: p.Freed(b.i, placement.Offload), from: ah, fromK: ak, back: rh, backK: rk, delta: delta})
		}
		if b.recompute {
			// The forward ends and the recompute starts inside the window.
			aways = append(aways, away{on: b.rec, amount: p.Freed(b.i, placement.Recompute), from: x.Plus(e.Start[b.i], p.Blocks[b.i].Time), fromK: zero,
				back: b.g, backK: zero, delta: delta})
		}
	}
	memoryAt := func(t z3.Int, returns bool) z3.Int {
		var terms []z3.Int
		for _, j := range on {
			// m_j · (⌊(t − s_j)/P⌋ + n_j + 1)
			terms = append(terms, x.Scale(p.Blocks[j].Memory, x.Add(fl(t, e.Start[j], false), offsets[j], x.IntVal(1))))
		}
		for _, a := range aways {
			// ⌊(t − a)/P⌋ − ⌊(t − r)/P⌋ + Δ micro-batches away
			n := x.Add(fl(t, a.from, false), x.Scale(-1, a.fromK), x.Scale(-1, fl(t, a.back, !returns)), a.backK, a.delta)
			terms = append(terms, x.Ite(a.on, x.Scale(-a.amount, n), zero))
		}
		return x.Add(terms...)
	}
	for _, j := range on {
		if p.Blocks[j].Memory > 0 {
			s.Assert(x.Le(memoryAt(e.Start[j], false), x.IntVal(budget)))
		}
	}
	for _, a := range aways {
		s.Assert(x.Implies(a.on, x.Le(memoryAt(a.back, true), x.IntVal(budget))))
	}
}
