// Package overlap pairs forwards and backwards into overlapped actions
// (placement's Overlap: DeepSeek's DualPipe F&B, PyTorch's OVERLAP_F_B,
// mixture-of-experts models that hide an all-to-all behind the other
// micro-batch's compute) in a schedule that has none or some: greedily,
// on every device, a forward and the whole backward of another
// micro-batch that run next to each other become one pair where that
// ends the schedule earlier, or as early while saving device time. The
// per-device orders stay as they are (a backward run just before a
// forward may move behind it), every result is compacted
// (compact.Compact) and verified, so it never breaks the budget.
//
// It works on schedules only, with no solver: the search gives it its
// constructions, the baselines and its best schedule.
package overlap

import (
	"context"
	"slices"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Passes is how many sweeps over every device Pair makes at most (each
// accepted pair can make another one pay).
const Passes = 3

// Pair returns s with forward-backward pairs added greedily where they
// shorten it (see the package comment), and whether any was added. A
// schedule whose placement overlaps nothing, with offload or recompute
// decisions, or on channels comes back as it is.
func Pair(ctx context.Context, s *schedule.Schedule) (*schedule.Schedule, bool) {
	p := s.Placement
	if p == nil || p.Overlap == nil || links.Queued(p) || len(s.Decisions) > 0 {
		return s, false
	}
	roles := p.Roles()
	orders := schedule.Orders(s)
	pairs := slices.Clone(s.Pairs)
	paired := map[schedule.Ref]bool{}
	for _, q := range pairs {
		if refs, _, why := group(p, roles, q); why == "" {
			for _, r := range refs {
				paired[r] = true
			}
		}
	}
	pg := &pairing{p: p, roles: roles, paired: paired}
	best := s
	bestMs := schedule.Makespan(s)
	changed := false
	for pass := 0; pass < Passes; pass++ {
		gained := false
		for d := range orders {
			for i := 0; i < len(orders[d]); i++ {
				if ctx.Err() != nil {
					return best, changed
				}
				trial, q, moved, ok := pg.candidate(orders, d, i)
				if !ok {
					continue
				}
				refs, t, _ := group(p, roles, q)
				sum := 0
				for _, r := range refs {
					sum += p.Blocks[r.Block].Time
				}
				next := append(slices.Clone(pairs), q)
				cs, err := compact.Compact(spec.New(p, s.MicroBatches), compact.Keep{Orders: trial, Pairs: next})
				if err != nil {
					continue
				}
				ins := cs.Instances
				c := &schedule.Schedule{Spec: spec.Spec{Placement: p, Cluster: s.Cluster, Given: s.Given, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: ins, Pairs: next}
				ms := schedule.Makespan(c)
				if ms > bestMs || (ms == bestMs && t >= sum) {
					continue
				}
				if verify.Schedule(c) != nil {
					continue // a moved backward may raise the memory over the budget
				}
				best, bestMs, pairs, changed, gained = c, ms, next, true, true
				if moved {
					orders = trial
				}
				for _, r := range refs {
					paired[r] = true
				}
				i += len(refs) - 1
			}
		}
		if !gained {
			break
		}
	}
	return best, changed
}

// group is the instances of pair q and its time (placement's rule).
func group(p *placement.Placement, roles []placement.Role, q schedule.Pair) ([]schedule.Ref, int, string) {
	blocks, t, why := p.OverlapGroup(q.Forward.Block, q.Backward.Block, roles)
	if why != "" {
		return nil, 0, why
	}
	out := []schedule.Ref{q.Forward}
	for _, b := range blocks[1:] {
		out = append(out, schedule.Ref{Block: b, Micro: q.Backward.Micro})
	}
	return out, t, ""
}

// pairing is what Pair's passes share: the placement, its blocks' roles
// and the instances already in a pair.
type pairing struct {
	p      *placement.Placement
	roles  []placement.Role
	paired map[schedule.Ref]bool
}

// candidate looks at position i of device d's order: a forward followed
// by the whole backward of another micro-batch (as one group), or a
// whole backward followed by a forward (the forward then moves before
// it). It returns the orders with the group in place, the pair, and
// whether the orders changed.
func (pg *pairing) candidate(orders [][]schedule.Ref, d, i int) ([][]schedule.Ref, schedule.Pair, bool, bool) {
	p, roles, paired := pg.p, pg.roles, pg.paired
	o := orders[d]
	r := o[i]
	if paired[r] || i+1 >= len(o) {
		return nil, schedule.Pair{}, false, false
	}
	fits := func(f, g schedule.Ref, at int) (schedule.Pair, int, bool) {
		q := schedule.Pair{Forward: f, Backward: g}
		if f.Micro == g.Micro {
			return q, 0, false
		}
		refs, _, why := group(p, roles, q)
		if why != "" {
			return q, 0, false
		}
		// The whole backward's instances must follow each other from at.
		for k, x := range refs[1:] {
			if at+k >= len(o) || o[at+k] != x || paired[x] {
				return q, 0, false
			}
		}
		return q, len(refs) - 1, true
	}
	switch {
	case roles[r.Block] == placement.RoleForward:
		if q, _, ok := fits(r, o[i+1], i+1); ok {
			return orders, q, false, true
		}
	case roles[r.Block].Waited():
		// A whole backward, then a forward: the forward moves first.
		blocks, ok := p.WholeBackward(r.Block, roles)
		if !ok {
			return nil, schedule.Pair{}, false, false
		}
		at := i + len(blocks)
		if at >= len(o) || roles[o[at].Block] != placement.RoleForward || paired[o[at]] {
			return nil, schedule.Pair{}, false, false
		}
		f := o[at]
		q, _, ok := fits(f, r, i)
		if !ok {
			return nil, schedule.Pair{}, false, false
		}
		moved := slices.Clone(orders)
		row := slices.Clone(o[:i])
		row = append(row, f)
		row = append(row, o[i:at]...)
		row = append(row, o[at+1:]...)
		moved[d] = row
		return moved, q, true, true
	}
	return nil, schedule.Pair{}, false, false
}
