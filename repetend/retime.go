package repetend

import (
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// PeriodOptions are the effort of Retime, MinimizePeriod and SolveFixed;
// the problem (the placement, the memory budget, the micro-batches, 0
// when unknown, and the steady state's latency budget, latency.go) is
// their spec.
type PeriodOptions struct {
	Seed int // random seed of the solver
	// Effort caps each solver call, in Z3 resource units (0: no cap).
	Effort int
}

// Retime is the repetend of candidate c's offsets on sp's placement,
// under sp's budgets — a repetend
// found on another cluster, say, whose links or devices have changed: the
// least period those offsets reach under the memory budget and the starts
// that reach it. Only the offsets are kept; the order of the blocks in
// the period is the solver's again. It returns nil when the offsets do
// not fit the budget at any period, or when a solver call reaches
// opt.Effort before any period is found; a cap met later keeps the least
// period found so far.
func Retime(ctx context.Context, sp spec.Spec, c Assignment, opt PeriodOptions) (*Repetend, error) {
	p, nr, offsets := sp.Placement, c.NR, c.Offsets
	if len(offsets) != len(p.Blocks) {
		return nil, fmt.Errorf("repetend: %d offsets for %d blocks", len(offsets), len(p.Blocks))
	}
	for _, o := range offsets {
		if o < 0 || o >= nr {
			return nil, fmt.Errorf("repetend: offset %d outside 0..%d", o, nr-1)
		}
	}
	if !withinBudget(p, encode.IterationEntry(sp, offsets, nr), sp.Memory) {
		return nil, nil
	}
	lo, hi := PeriodBound(p, offsets), upperPeriod(p)
	if lo > hi {
		return nil, nil
	}
	ps, err := newPeriodic(sp, c, opt)
	if err != nil {
		return nil, err
	}
	defer ps.Close()
	it, _, err := ps.Minimize(ctx, lo, hi)
	r := repetend(nr, it)
	if errors.Is(err, z3.ErrEffort) || interrupted(err) {
		return r, nil
	}
	return r, err
}

// maxAdaptBounds caps the solver-free bounds Adapt computes: a few
// milliseconds on the built-in shapes, and a bound on the work for the
// largest placement the solver takes.
const maxAdaptBounds = 4096

// Adapt moves offsets found elsewhere — a previous plan's, on a cluster
// whose links or devices have since changed — towards offsets that suit
// p, without the solver: steepest descent on PeriodBound over single
// moves (one block's offset one up or down, within 0..nr-1 and
// non-increasing along every dependency, property 4.2), until no move
// lowers the bound or maxAdaptBounds bounds were computed. Ties go to
// the lowest block index, a move down before a move up, so the result is
// deterministic. The period those offsets reach is Retime's to find; the
// bound only says where to look: a slower link between two stages wants
// more micro-batches in flight across it, which one move adds.
func Adapt(p *placement.Placement, nr int, offsets []int) []int {
	cur := append([]int(nil), offsets...)
	best := PeriodBound(p, cur)
	preds, succs := p.Preds(), p.Succs()
	// fits reports whether block i may take offset v: within 0..nr-1,
	// no above its predecessors' and no below its successors'.
	fits := func(i, v int) bool {
		if v < 0 || v >= nr {
			return false
		}
		for _, j := range preds[i] {
			if cur[j] < v {
				return false
			}
		}
		for _, j := range succs[i] {
			if cur[j] > v {
				return false
			}
		}
		return true
	}
	for spent := 0; spent < maxAdaptBounds; {
		move, to := -1, 0
		for i := range cur {
			for _, v := range []int{cur[i] - 1, cur[i] + 1} {
				if spent >= maxAdaptBounds || !fits(i, v) {
					continue
				}
				old := cur[i]
				cur[i] = v
				b := PeriodBound(p, cur)
				cur[i] = old
				spent++
				if b < best {
					best, move, to = b, i, v
				}
			}
		}
		if move < 0 {
			break
		}
		cur[move] = to
	}
	return cur
}
