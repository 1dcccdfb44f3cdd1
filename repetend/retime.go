package repetend

import (
	"context"
	"errors"
	"fmt"

	"tessel/placement"
	"tessel/smt"
)

// Retime is the repetend of given offsets on p — a repetend found on
// another cluster, say, whose links or devices have changed: the least
// period those offsets reach under the memory budget and the starts that
// reach it. Only the offsets are kept; the order of the blocks in the
// period is the solver's again. It returns nil when the offsets do not
// fit the budget at any period, or when a solver call reaches effort (0:
// no cap) before any period is found; a cap met later keeps the least
// period found so far.
func Retime(ctx context.Context, p *placement.Placement, nr int, offsets []int, memory, microBatches, seed, effort int) (*Repetend, error) {
	if len(offsets) != len(p.Blocks) {
		return nil, fmt.Errorf("repetend: %d offsets for %d blocks", len(offsets), len(p.Blocks))
	}
	for _, o := range offsets {
		if o < 0 || o >= nr {
			return nil, fmt.Errorf("repetend: offset %d outside 0..%d", o, nr-1)
		}
	}
	if !withinBudget(p, iterationEntry(p, offsets, nr, microBatches), memory) {
		return nil, nil
	}
	lo, hi := PeriodBound(p, offsets), upperPeriod(p)
	if lo > hi {
		return nil, nil
	}
	ps, err := newPeriodSolver(p, offsets, nr, memory, microBatches, seed, effort)
	if err != nil {
		return nil, err
	}
	defer ps.close()
	r, _, err := ps.search(ctx, Candidate{NR: nr, Offsets: offsets}, lo, hi)
	if errors.Is(err, smt.ErrEffort) || interrupted(err) {
		return r, nil
	}
	return r, err
}
