package torchcsv

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Overlap is one OVERLAP_F_B of rank Rank kept as an overlapped pair
// (schedule.Pair): its forward is Rows[Rank][At] and its whole backward
// the Len actions after it, a full backward (B) or an input gradient and
// its weight gradient (I, W), which the file writes as one B, as
// DualPipeV does.
type Overlap struct {
	Rank, At, Len int
}

// overlapsOf maps, for rank r, the position of every overlapped forward
// to the length of its backward.
func (t *Table) overlapsOf(r int) map[int]int {
	var at map[int]int
	for _, o := range t.Overlaps {
		if o.Rank == r {
			if at == nil {
				at = map[int]int{}
			}
			at[o.At] = o.Len
		}
	}
	return at
}

// overlapCell is the OVERLAP_F_B cell of the forward row[i] and the
// whole backward after it, written as one full backward B (current
// naming).
func overlapCell(row []Action, i int) Cell {
	g := row[i+1]
	b := Action{Stage: g.Stage, Kind: placement.Backward, Micro: g.Micro}
	return Cell{Stage: -1, Op: OpOverlapFB, Micro: -1, Sub: []Cell{cellOf(row[i]), cellOf(b)}}
}

// exportPairs puts every overlapped pair of s into t: on its device's
// row, the forward first, then its whole backward, marked as one
// OVERLAP_F_B. The instances of a pair start together, so they are next
// to each other in the row already.
func exportPairs(s *schedule.Schedule, t *Table) error {
	p := s.Placement
	roles := p.Roles()
	orders := schedule.Orders(s)
	for _, q := range s.Pairs {
		blocks, _, why := p.OverlapGroup(q.Forward.Block, q.Backward.Block, roles)
		if why != "" {
			return fmt.Errorf("pair %s: %s", schedule.PairText(s, q), why)
		}
		group := []schedule.Ref{q.Forward}
		for _, b := range blocks[1:] {
			group = append(group, schedule.Ref{Block: b, Micro: q.Backward.Micro})
		}
		d := p.Blocks[q.Forward.Block].Devices[0]
		at := len(orders[d])
		for _, r := range group {
			if k := slices.Index(orders[d], r); k >= 0 {
				at = min(at, k)
			}
		}
		if at+len(group) > len(orders[d]) {
			return fmt.Errorf("pair %s: not on device %d's row", schedule.PairText(s, q), d)
		}
		for k := range group {
			if !slices.Contains(orders[d][at:at+len(group)], group[k]) {
				return fmt.Errorf("pair %s: its actions are not next to each other on device %d's row", schedule.PairText(s, q), d)
			}
		}
		// The forward first, then the whole backward, in the table too.
		row := t.Rows[d]
		acts := map[schedule.Ref]Action{}
		for k, r := range orders[d][at : at+len(group)] {
			acts[r] = row[at+k]
		}
		for k, r := range group {
			row[at+k] = acts[r]
			orders[d][at+k] = r
		}
		t.Overlaps = append(t.Overlaps, Overlap{Rank: d, At: at, Len: len(group) - 1})
	}
	slices.SortFunc(t.Overlaps, func(a, b Overlap) int {
		if a.Rank != b.Rank {
			return a.Rank - b.Rank
		}
		return a.At - b.At
	})
	return nil
}
