package construct

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Constructions that decide (offload, recompute) cost tens of
// milliseconds per micro-batch each on eight devices — list schedules
// with their compaction and verification, hundreds of them — so that a
// portfolio of 10,000 micro-batches would take minutes. Beyond
// decisionFrom micro-batches they run on a window of about decisionBase
// micro-batches instead, and only the best few of them are carried to
// N: extended periodically where they repeat (schedule.ExtendPeriodic:
// the Tessel paper's argument, Lin et al., that a schedule costs its
// repetend, found once and repeated), built again for N otherwise.
const (
	// decisionFrom is the most micro-batches built whole.
	decisionFrom = 256
	// decisionBase is the least window; the window is decisionBase
	// plus (N − decisionBase) mod decisionAlign, so that N − window is a
	// multiple of every period of up to decisionAlign micro-batches that
	// divides decisionAlign (1, 2, 3, 4, 6, 12).
	decisionBase  = 48
	decisionAlign = 12
	// decisionKeep is how many of the window's best schedules are
	// carried to N (besides the modulo schedules that keep every
	// activation).
	decisionKeep = 2
)

// decisionWindow is the window of micro-batches the portfolio of sp is
// built on (windowPortfolio), 0 where it is built whole: no decisions,
// no budget, or at most decisionFrom micro-batches.
func decisionWindow(sp spec.Spec) int {
	if !sp.Allowed.Any() || sp.Memory <= 0 || sp.MicroBatches <= decisionFrom {
		return 0
	}
	return decisionBase + (sp.MicroBatches-decisionBase)%decisionAlign
}

// windowPortfolio is the portfolio of sp built on w micro-batches, then
// carried to N: of the window's distinct schedules, best first, every
// modulo schedule that keeps every activation (the search's incumbent
// repetend comes from them) and the first decisionKeep others, each
// extended periodically where it repeats by micro-batch
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
	var out []Entry
	seen := map[uint64]bool{}
	carried := 0
	for _, e := range win {
		if ctx.Err() != nil && carried > 0 {
			break
		}
		if e.Periodic == nil && carried >= decisionKeep {
			continue
		}
		if h := fingerprint(e.Schedule); seen[h] {
			continue
		} else {
			seen[h] = true
		}
		c, ok := carry(ctx, e, w, n)
		if !ok {
			continue
		}
		if e.Periodic == nil {
			carried++
		}
		out = append(out, c)
	}
	if carried == 0 {
		return portfolio(ctx, sp.Placement, n, sp.Memory, sp.Allowed)
	}
	sortEntries(out)
	return out, nil
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
