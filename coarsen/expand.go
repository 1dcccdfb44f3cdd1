package coarsen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Choice is the option of every block of p (its index in p's Options)
// that the coarse choice cchoice (by coarse block) gives: each block on
// its coarse block's group.
func (c *Coarse) Choice(p *placement.Placement, cchoice []int) ([]int, error) {
	if len(cchoice) != len(c.Members) {
		return nil, fmt.Errorf("coarsen: choice of %d coarse blocks for %d", len(cchoice), len(c.Members))
	}
	out := make([]int, len(p.Blocks))
	for i := range p.Blocks {
		cb := c.Of[i]
		opts := c.Placement.DeviceOptions(cb)
		if cchoice[cb] < 0 || cchoice[cb] >= len(opts) {
			return nil, fmt.Errorf("coarsen: coarse block %s: choice %d out of range 0..%d", c.Placement.Blocks[cb].ID, cchoice[cb], len(opts)-1)
		}
		o := optionIndex(p.DeviceOptions(i), opts[cchoice[cb]])
		if o < 0 {
			return nil, fmt.Errorf("coarsen: block %s: devices %v are not among its options", p.Blocks[i].ID, opts[cchoice[cb]])
		}
		out[i] = o
	}
	return out, nil
}

// Expand turns s, a schedule of the coarse placement with its choice made
// (placement's Choose of c.Placement), into a verified schedule of p, the
// placement c was coarsened from, with the same micro-batches and budget:
// every block on its coarse block's devices, re-timed exactly with p's
// own times and transfers. Two orders are timed and the shorter kept
// (the first on a tie): every device running the members of its coarse
// instances in the coarse order, each coarse instance's members one after
// another in topological order; and the instances taken in that order
// but each put into the earliest gap of its devices that its inputs
// allow (heft.Insert), which lets a member that is ready early fill a
// gap.
func (c *Coarse) Expand(p *placement.Placement, s *schedule.Schedule) (*schedule.Schedule, error) {
	if s == nil || s.Placement == nil || len(s.Placement.Blocks) != len(c.Members) {
		return nil, fmt.Errorf("coarsen: expand: not a schedule of the coarse placement")
	}
	choice, err := c.Choice(p, s.Placement.Choice())
	if err != nil {
		return nil, err
	}
	n := s.MicroBatches
	pos := make([]int, len(p.Blocks)) // position of a block among its coarse block's members
	for _, ms := range c.Members {
		for x, i := range ms {
			pos[i] = x
		}
	}
	var orders [][]schedule.Ref
	for _, order := range schedule.Orders(s) {
		var out []schedule.Ref
		for _, r := range order {
			for _, i := range c.Members[r.Block] {
				out = append(out, schedule.Ref{Block: i, Micro: r.Micro})
			}
		}
		orders = append(orders, out)
	}
	byOrder, errA := heft.Timed(spec.Spec{Placement: p, MicroBatches: n, Memory: s.Memory}, choice, orders)
	start := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		start[in.Ref()] = in.Start
	}
	seq := make([]schedule.Ref, 0, len(p.Blocks)*n)
	for i := range p.Blocks {
		for m := range n {
			seq = append(seq, schedule.Ref{Block: i, Micro: m})
		}
	}
	key := func(r schedule.Ref) schedule.Ref { return schedule.Ref{Block: c.Of[r.Block], Micro: r.Micro} }
	slices.SortFunc(seq, func(a, b schedule.Ref) int {
		return cmp.Or(cmp.Compare(start[key(a)], start[key(b)]), cmp.Compare(c.Of[a.Block], c.Of[b.Block]),
			cmp.Compare(a.Micro, b.Micro), cmp.Compare(pos[a.Block], pos[b.Block]))
	})
	byGaps, errB := heft.Insert(spec.Spec{Placement: p, MicroBatches: n, Memory: s.Memory}, choice, seq)
	switch {
	case errA != nil && errB != nil:
		return nil, fmt.Errorf("coarsen: expand: %w", errA)
	case errA != nil:
		return byGaps, nil
	case errB != nil:
		return byOrder, nil
	}
	if schedule.Makespan(byGaps) < schedule.Makespan(byOrder) {
		return byGaps, nil
	}
	return byOrder, nil
}
