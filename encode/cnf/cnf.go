// Package cnf writes a schedule problem as a time-indexed formula in
// conjunctive normal form, for any SAT solver: "a schedule of the spec that
// ends by the makespan T". Satisfiable, the solver's model is read back as
// a schedule (Formula.Schedule, verified); unsatisfiable, no schedule of
// the spec ends by T, so T + 1 is a lower bound, exact in the spec's own
// rules.
//
// It is there for the questions the solver's integer encodings leave open
// (docs/memory-experiment.md: offload alone at memory 3): a modern SAT
// solver proves or finds a schedule of hundreds of instances with
// decisions where Z3's difference logic does not answer. The formula is
// exact for what it encodes: block times and transfer delays, one block
// at a time on a device, the memory budget, offloads on the host channels.
// Encode refuses a spec that switches on anything else (recompute, a
// latency budget, links that queue, overlapped pairs, sharded stages,
// blocks that choose their devices).
//
// The encoding: every instance's start is an order encoding (one variable
// per time t for "starts at t or before") over the window its micro-batch's
// critical path leaves; a device's busy instances at a time and a host
// channel's moves at a time are at most one; an activation is live on its
// devices from its forward's start to the start of the block that frees
// it, except between its offload's end and its reload's start; a device's
// live activations, weighted by their memory, are at most its budget at
// every time (Sinz's sequential counter). Micro-batches are alike, so
// their first blocks start in micro-batch order: every schedule is one of
// those, renamed.
package cnf

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/hostchan"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
)

// MaxLiterals is the most literals Encode writes: a formula past it is
// refused before it is built (a few GB of memory at the limit).
const MaxLiterals = 200_000_000

// Formula is a spec's problem at one makespan as clauses over variables
// 1 … Vars (a clause lists literals: v true, -v false).
type Formula struct {
	Makespan int
	Vars     int
	Clauses  [][]int

	sp     spec.Spec
	tru    int
	first  int      // the block whose instances start in micro-batch order
	starts [][]ivar // by block, then micro-batch
	moves  []move
}

// ivar is an integer in [lo, hi] in the order encoding: variable base+t-lo
// is "value ≤ t" for lo ≤ t < hi.
type ivar struct{ lo, hi, base int }

// move is the offload of one forward instance: whether it is offloaded,
// and its offload's and reload's starts.
type move struct {
	block, micro int
	on           int
	off, back    ivar
}

// Encode returns the formula "a schedule of sp that ends by makespan". It
// refuses, with an error that names it, a spec whose rules it does not
// encode, and a formula of more than MaxLiterals literals.
func Encode(ctx context.Context, sp spec.Spec, makespan int) (*Formula, error) {
	if err := supported(sp); err != nil {
		return nil, err
	}
	p := sp.Placement
	order, _ := p.Topo()
	if len(order) == 0 {
		return nil, inputerr.Errorf("cnf: placement %s has no blocks", p.Name)
	}
	if makespan < p.CriticalPath() {
		return nil, inputerr.Errorf("cnf: makespan %d is below the critical path %d", makespan, p.CriticalPath())
	}
	if size := estimate(sp, makespan); size > MaxLiterals {
		return nil, inputerr.Errorf("cnf: the formula would have about %d literals, more than %d: fewer micro-batches or an earlier makespan make it smaller", size, MaxLiterals)
	}
	var freer []int
	if p.Limited(sp.Memory) {
		var err error
		if freer, err = freers(sp); err != nil {
			return nil, err
		}
	}
	f := &Formula{Makespan: makespan, sp: sp, first: order[0]}
	f.tru = f.newVar()
	f.Clauses = append(f.Clauses, []int{f.tru})
	if err := f.instances(ctx); err != nil {
		return nil, err
	}
	if err := f.devices(ctx); err != nil {
		return nil, err
	}
	if err := f.offloads(ctx); err != nil {
		return nil, err
	}
	if err := f.memory(ctx, freer); err != nil {
		return nil, err
	}
	return f, nil
}

// supported is nil where Encode encodes every rule sp switches on: the
// memory budget and the offload decisions (rule/memory, rule/hostchan);
// any other rule, one added later included, is refused by its title. A
// budget also needs every activation's freer (freers).
func supported(sp spec.Spec) error {
	p := sp.Placement
	why := ""
	switch {
	case p == nil:
		why = "no placement"
	case p.Open():
		why = "blocks that choose their devices"
	case sp.Allowed.Recompute && p.HasRecompute():
		why = "recompute"
	}
	if why == "" {
		if r := rules.Unhandled(sp, hostchan.Rule{}, memory.Rule{}); r != nil {
			why = rule.Title(r)
		}
	}
	if why == "" {
		for _, b := range p.Blocks {
			if b.Time < 1 {
				why = fmt.Sprintf("block %s, which takes no time", b.ID)
				break
			}
		}
	}
	if why != "" {
		return inputerr.Errorf("cnf: the time-indexed encoding does not model %s", why)
	}
	return nil
}

// freers returns, for every block that takes memory, the block that frees
// it: a block with the opposite memory on the same devices that depends
// on it, its own gradient block (placement's Pairs) where there is one.
// The encoding counts each activation live from its forward's start to
// its freer's start, less its time on the host, so every other block must
// take no memory, and an activation that may be offloaded must be freed
// after its consumer (its time on the host then lies inside its life).
func freers(sp spec.Spec) ([]int, error) {
	p := sp.Placement
	reach := p.Reach()
	pair := p.Pairs()
	cons := p.Consumers()
	out := make([]int, len(p.Blocks))
	taken := make([]bool, len(p.Blocks))
	for i := range out {
		out[i] = -1
	}
	for i, b := range p.Blocks {
		if b.Memory <= 0 {
			continue
		}
		moves := sp.Allowed.Offload && p.Offloadable(i, cons)
		for _, own := range []bool{true, false} {
			for j, c := range p.Blocks {
				switch {
				case out[i] >= 0 || taken[j] || c.Memory != -b.Memory || !slices.Equal(b.Devices, c.Devices) || !reach.Has(i, j):
				case own && pair[j] != i:
				case moves && j != cons[i] && !reach.Has(cons[i], j):
				default:
					out[i], taken[j] = j, true
				}
			}
		}
		if out[i] < 0 {
			return nil, inputerr.Errorf("cnf: the time-indexed encoding needs the memory of block %s freed by one later block on its devices (after its consumer where it may be offloaded)", b.ID)
		}
	}
	for j, c := range p.Blocks {
		if c.Memory < 0 && !taken[j] {
			return nil, inputerr.Errorf("cnf: the time-indexed encoding needs the memory block %s frees taken by one earlier block", c.ID)
		}
	}
	return out, nil
}

// estimate is about how many literals the formula has: the order
// encodings, the devices' and channels' counters, the memory's.
func estimate(sp spec.Spec, makespan int) int {
	p := sp.Placement
	n := sp.MicroBatches
	k := 0
	for _, b := range p.Blocks {
		k += len(b.Devices) * (b.Time + 4)
	}
	per := k * n * makespan * 3
	if sp.Allowed.Offload {
		per *= 3
	}
	if p.Limited(sp.Memory) {
		per += len(p.Blocks) * n * makespan * 8
	}
	return per
}

func (f *Formula) newVar() int { f.Vars++; return f.Vars }

// add adds a clause, dropping false literals and clauses a true literal
// satisfies.
func (f *Formula) add(lits ...int) {
	out := make([]int, 0, len(lits))
	for _, l := range lits {
		switch l {
		case f.tru:
			return
		case -f.tru:
			continue
		}
		out = append(out, l)
	}
	f.Clauses = append(f.Clauses, out)
}

// le is the literal "v ≤ t".
func (f *Formula) le(v ivar, t int) int {
	switch {
	case t < v.lo:
		return -f.tru
	case t >= v.hi:
		return f.tru
	}
	return v.base + t - v.lo
}

func (f *Formula) newInt(lo, hi int) ivar {
	v := ivar{lo: lo, hi: hi, base: f.Vars + 1}
	f.Vars += hi - lo
	for t := lo; t < hi-1; t++ {
		f.add(-f.le(v, t), f.le(v, t+1))
	}
	return v
}

// within adds "v ≤ t implies w ≤ t - d" for every t: w + d ≤ v, under the
// condition literals (each must be true for the constraint to bind).
func (f *Formula) within(w, v ivar, d int, cond ...int) {
	for t := v.lo; t <= v.hi; t++ {
		c := make([]int, 0, len(cond)+2)
		for _, l := range cond {
			c = append(c, -l)
		}
		f.add(append(c, -f.le(v, t), f.le(w, t-d))...)
	}
}

// busy returns a literal that is true where v's interval [v, v+d) holds
// time t (and every condition literal is true); false where it cannot.
func (f *Formula) busy(v ivar, d, t int, cond ...int) int {
	if t < v.lo || t >= v.hi+d {
		return -f.tru
	}
	b := f.newVar()
	c := make([]int, 0, len(cond)+3)
	for _, l := range cond {
		c = append(c, -l)
	}
	f.add(append(c, -f.le(v, t), f.le(v, t-d), b)...)
	return b
}

// atMost adds "at most k of xs" (Sinz's sequential counter; a literal
// listed w times weighs w).
func (f *Formula) atMost(xs []int, k int) {
	n := len(xs)
	if n <= k {
		return
	}
	if k == 0 {
		for _, x := range xs {
			f.add(-x)
		}
		return
	}
	prev := make([]int, k)
	for i, x := range xs {
		if i == n-1 {
			f.add(-x, -prev[k-1])
			break
		}
		cur := make([]int, k)
		for j := range cur {
			cur[j] = f.newVar()
		}
		f.add(-x, cur[0])
		for j := range k {
			if i > 0 {
				f.add(-prev[j], cur[j])
				if j > 0 {
					f.add(-x, -prev[j-1], cur[j])
				}
			} else if j > 0 {
				f.add(-cur[j])
			}
		}
		if i > 0 {
			f.add(-x, -prev[k-1])
		}
		prev = cur
	}
}

// instances makes every instance's start, within the window its
// micro-batch's heads and tails leave, with the dependencies and the
// micro-batches' first blocks in order.
func (f *Formula) instances(ctx context.Context) error {
	p, first := f.sp.Placement, f.first
	n := f.sp.MicroBatches
	heads, tails := p.Heads(), p.Tails()
	// The first block of micro-batch m starts after those of the m before
	// it, one at a time on its devices, so at step·m or later; a block
	// that depends on it starts its longest path from it later still.
	step := p.Blocks[first].Time
	from := fromFirst(p, first)
	f.starts = make([][]ivar, len(p.Blocks))
	for i, b := range p.Blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		f.starts[i] = make([]ivar, n)
		for m := range n {
			lo, hi := heads[i], f.Makespan-b.Time-tails[i]
			if from[i] >= 0 {
				lo = max(lo, step*m+from[i])
			}
			if i == first {
				hi -= step * (n - 1 - m)
			}
			if lo > hi {
				return inputerr.Errorf("cnf: no schedule of %d micro-batches ends by %d: block %s of micro-batch %d has no time", n, f.Makespan, b.ID, m)
			}
			f.starts[i][m] = f.newInt(lo, hi)
		}
	}
	for _, d := range p.Deps {
		for m := range n {
			f.within(f.starts[d.From][m], f.starts[d.To][m], p.Delay(d))
		}
	}
	for m := 0; m+1 < n; m++ {
		f.within(f.starts[first][m], f.starts[first][m+1], step)
	}
	return nil
}

// fromFirst is, for every block, the longest dependency path from the
// start of block first to its start; -1 where it does not depend on it.
func fromFirst(p *placement.Placement, first int) []int {
	order, _ := p.Topo()
	preds := p.PredDeps()
	out := make([]int, len(p.Blocks))
	for i := range out {
		out[i] = -1
	}
	out[first] = 0
	for _, i := range order {
		for _, d := range preds[i] {
			if out[d.From] >= 0 {
				out[i] = max(out[i], out[d.From]+p.Delay(d))
			}
		}
	}
	return out
}

// devices adds "one block at a time" on every device.
func (f *Formula) devices(ctx context.Context) error {
	p := f.sp.Placement
	at := make([][][]int, p.Devices)
	for d := range at {
		at[d] = make([][]int, f.Makespan)
	}
	for i, b := range p.Blocks {
		for m := range f.sp.MicroBatches {
			v := f.starts[i][m]
			for t := v.lo; t < v.hi+b.Time; t++ {
				x := f.busy(v, b.Time, t)
				for _, d := range b.Devices {
					at[d][t] = append(at[d][t], x)
				}
			}
		}
	}
	for d := range at {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, xs := range at[d] {
			f.atMost(xs, 1)
		}
	}
	return nil
}

// offloads makes every offloadable forward instance's decision and moves,
// with their timing (placement's EarliestOffload, EarliestReload,
// LatestReload) and one move at a time on every host channel.
func (f *Formula) offloads(ctx context.Context) error {
	if !f.sp.Allowed.Offload {
		return nil
	}
	p := f.sp.Placement
	cons := p.Consumers()
	channels := map[int][][]int{}
	for i, b := range p.Blocks {
		if !p.Offloadable(i, cons) || p.Freed(i, placement.Offload) == 0 {
			continue
		}
		c, ot := cons[i], p.OffloadTime(i)
		for m := range f.sp.MicroBatches {
			if err := ctx.Err(); err != nil {
				return err
			}
			fw, use := f.starts[i][m], f.starts[c][m]
			lo, hi := fw.lo+b.Time, use.hi-2*ot
			if lo > hi {
				continue // no room to move it out and back: kept
			}
			mv := move{block: i, micro: m, on: f.newVar()}
			mv.off = f.newInt(lo, hi)
			mv.back = f.newInt(lo+ot, hi+ot)
			f.within(fw, mv.off, b.Time, mv.on)
			f.within(mv.off, mv.back, ot, mv.on)
			f.within(mv.back, use, ot, mv.on)
			for _, v := range []ivar{mv.off, mv.back} {
				for t := v.lo; t < v.hi+ot; t++ {
					x := f.busy(v, ot, t, mv.on)
					for _, ch := range p.BlockSwitches(i) {
						if channels[ch] == nil {
							channels[ch] = make([][]int, f.Makespan)
						}
						channels[ch][t] = append(channels[ch][t], x)
					}
				}
			}
			f.moves = append(f.moves, mv)
		}
	}
	for ch := range p.Devices {
		for _, xs := range channels[ch] {
			f.atMost(xs, 1)
		}
	}
	return nil
}

// memory adds every device's budget at every time: its live activations
// (each from its forward's start to its freer's, freers), each weighted
// by its memory, at most the budget.
func (f *Formula) memory(ctx context.Context, freer []int) error {
	p := f.sp.Placement
	if !p.Limited(f.sp.Memory) {
		return nil
	}
	moved := map[[2]int]move{}
	for _, mv := range f.moves {
		moved[[2]int{mv.block, mv.micro}] = mv
	}
	live := make([][][]int, p.Devices)
	for d := range live {
		live[d] = make([][]int, f.Makespan)
	}
	for i, b := range p.Blocks {
		if freer[i] < 0 {
			continue
		}
		for m := range f.sp.MicroBatches {
			fw, fr := f.starts[i][m], f.starts[freer[i]][m]
			mv, ok := moved[[2]int{i, m}]
			ot := p.OffloadTime(i)
			for t := fw.lo; t < fr.hi; t++ {
				x := f.newVar()
				c := []int{-f.le(fw, t), f.le(fr, t), x}
				if ok && t-ot >= mv.off.lo && t < mv.back.hi {
					out := f.newVar()
					f.add(-out, mv.on)
					f.add(-out, f.le(mv.off, t-ot))
					f.add(-out, -f.le(mv.back, t))
					c = append(c, out)
				}
				f.add(c...)
				for _, d := range b.Devices {
					for range b.Memory {
						live[d][t] = append(live[d][t], x)
					}
				}
			}
		}
	}
	for d := range live {
		if err := ctx.Err(); err != nil {
			return err
		}
		budget := f.sp.Budget(d)
		if budget <= 0 {
			continue
		}
		for _, xs := range live[d] {
			f.atMost(xs, budget)
		}
	}
	return nil
}

// WriteDIMACS writes the formula in the DIMACS CNF format that SAT solvers
// read, with a comment line that names the problem.
func (f *Formula) WriteDIMACS(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	p := f.sp.Placement
	fmt.Fprintf(bw, "c tessel: %s, %d micro-batches, memory %d, makespan at most %d\n", p.Name, f.sp.MicroBatches, f.sp.Memory, f.Makespan)
	fmt.Fprintf(bw, "p cnf %d %d\n", f.Vars, len(f.Clauses))
	buf := make([]byte, 0, 64)
	for _, c := range f.Clauses {
		buf = buf[:0]
		for _, l := range c {
			buf = strconv.AppendInt(buf, int64(l), 10)
			buf = append(buf, ' ')
		}
		buf = append(buf, '0', '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
