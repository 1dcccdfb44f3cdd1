package construct

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Constructions that decide (offload, recompute) cost tens of
// milliseconds per micro-batch each on eight devices — list schedules
// with their compaction and verification, hundreds of them — so that a
// portfolio of 10,000 micro-batches would take minutes. Beyond
// decisionFrom micro-batches they run on a window of about decisionBase
// micro-batches instead, and only the one that promises most at N is
// carried there: extended periodically where it repeats
// (schedule.ExtendPeriodic: the Tessel paper's argument, Lin et al.,
// that a schedule costs its repetend, found once and repeated), built
// again for N otherwise.
//
// The window's order is a poor guide to N's: a list schedule that
// decides settles into its steady pace only after its fill, so that one
// that ends first on the window can end 4 % later at N. The first
// decisionProbe distinct candidates are therefore also built on a second
// window, decisionProbeStep micro-batches longer, and ranked by the
// makespan their pace between the two windows gives at N (exact for one
// that repeats: its extension's).
const (
	// decisionFrom is the most micro-batches built whole.
	decisionFrom = 256
	// decisionBase is the least window; the window is decisionBase
	// plus (N − decisionBase) mod decisionAlign, so that N − window is a
	// multiple of every period of up to decisionAlign micro-batches that
	// divides decisionAlign (1, 2, 3, 4, 6, 12).
	decisionBase  = 48
	decisionAlign = 12
	// decisionKeep is how many of the window's schedules that decide
	// are carried to N (besides the modulo schedules that keep every
	// activation): each costs a build at N, seconds at 10,000.
	decisionKeep = 1
	// decisionProbe is how many of the window's best distinct
	// schedules that decide are ranked by their pace (probe);
	// decisionProbeStep, how many micro-batches longer the second
	// window is (a multiple of decisionAlign, so that N − the second
	// window stays one of every period the first allows).
	decisionProbe     = 8
	decisionProbeStep = 8 * decisionAlign
)

// DecisionWindow is the window of micro-batches the portfolio of sp is
// built on (windowPortfolio), 0 where it is built whole: no decisions,
// no budget, or at most decisionFrom micro-batches. The search builds
// the baselines on the same window (baseline.BuildCarried).
func DecisionWindow(sp spec.Spec) int {
	if !sp.Allowed.Any() || sp.Memory <= 0 || sp.MicroBatches <= decisionFrom {
		return 0
	}
	return decisionBase + (sp.MicroBatches-decisionBase)%decisionAlign
}

// windowPortfolio is the portfolio of sp built on w micro-batches, then
// carried to N: of the window's distinct schedules, best first, every
// modulo schedule that keeps every activation (the search's incumbent
// repetend comes from them), and, of the first decisionProbe others,
// the first decisionKeep in the order of the makespan they promise at N
// (probe), each extended periodically where it repeats by micro-batch
// (schedule.FindPeriodicity; named "<name>/repeated from w") and built
// again for N micro-batches otherwise (Entry.build). Where none of the
// others can be carried to N, the portfolio is built on all N
// micro-batches.
func windowPortfolio(ctx context.Context, sp spec.Spec, w int) ([]Entry, error) {
	n := sp.MicroBatches
	win, err := portfolio(ctx, sp.Placement, w, sp.Memory, sp.Allowed)
	if err != nil {
		return nil, err
	}
	var out, others []Entry
	seen := map[uint64]bool{}
	for _, e := range win {
		if h := fingerprint(e.Schedule); seen[h] {
			continue
		} else {
			seen[h] = true
		}
		switch {
		case e.Periodic != nil:
			if c, ok := carry(ctx, e, w, n); ok {
				out = append(out, c)
			}
		case len(others) < decisionProbe:
			others = append(others, e)
		}
	}
	carried := 0
	for _, e := range probe(ctx, others, w, n) {
		if carried >= decisionKeep || (ctx.Err() != nil && carried > 0) {
			break
		}
		if c, ok := carry(ctx, e, w, n); ok {
			out = append(out, c)
			carried++
		}
	}
	if carried == 0 {
		return portfolio(ctx, sp.Placement, n, sp.Memory, sp.Allowed)
	}
	sortEntries(out)
	return out, nil
}

// probe is es, schedules of w micro-batches, in the order of the
// makespan each promises at n: its periodic extension's where it
// repeats, else the line through its makespans on w and on
// w + decisionProbeStep micro-batches (Entry.build); ties, and those
// left unmeasured (no build, or ctx ended), keep their order after the
// measured ones.
func probe(ctx context.Context, es []Entry, w, n int) []Entry {
	const unmeasured = int(^uint(0) >> 1)
	promise := make([]int, len(es))
	w2 := w + decisionProbeStep
	for k, e := range es {
		promise[k] = unmeasured
		if per, ok := schedule.FindPeriodicity(e.Schedule); ok && (n-w)%per.PerPeriod == 0 {
			promise[k] = per.Extended(e.Schedule, n)
			continue
		}
		if e.build == nil || w2 >= n || ctx.Err() != nil {
			continue
		}
		if s, err := e.build(ctx, w2); err == nil {
			m2 := schedule.Makespan(s)
			promise[k] = m2 + (m2-e.Makespan)*(n-w2)/decisionProbeStep
		}
	}
	idx := make([]int, len(es))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(promise[a], promise[b]) })
	out := make([]Entry, len(es))
	for k, x := range idx {
		out[k] = es[x]
	}
	return out
}

// carry is e, a construction on w micro-batches, on n: extended
// periodically where it repeats by micro-batch, built again otherwise.
func carry(ctx context.Context, e Entry, w, n int) (Entry, bool) {
	if per, ok := schedule.FindPeriodicity(e.Schedule); ok && (n-w)%per.PerPeriod == 0 {
		if s, err := schedule.ExtendPeriodic(e.Schedule, per, n); err == nil && verify.Schedule(s) == nil {
			return Entry{Name: fmt.Sprintf("%s/repeated from %d", e.Name, w), Schedule: s, Makespan: schedule.Makespan(s), Periodic: e.Periodic}, true
		}
	}
	if e.build == nil {
		return Entry{}, false
	}
	s, err := e.build(ctx, n)
	if err != nil {
		return Entry{}, false
	}
	return Entry{Name: e.Name, Schedule: s, Makespan: schedule.Makespan(s), Periodic: e.Periodic}, true
}

// fingerprint is a hash of s's starts and decisions: equal schedules
// built by different constructions are carried to N once.
func fingerprint(s *schedule.Schedule) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v int) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	for _, in := range s.Instances {
		put(in.Block)
		put(in.Micro)
		put(in.Start)
	}
	for _, d := range s.Decisions {
		put(d.Block)
		put(d.Micro)
		put(len(d.Action))
		put(d.Start)
		put(d.Reload)
	}
	return h.Sum64()
}
