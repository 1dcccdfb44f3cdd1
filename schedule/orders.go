package schedule

import (
	"cmp"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// Orders returns, for every device, the instances of s that occupy it in
// the order it runs them: by start time, then block index, then
// micro-batch. compact.Compact(s.Spec, compact.Keep{Orders: Orders(s)}) of a valid
// schedule is valid and no longer.
func Orders(s *Schedule) [][]Ref {
	if s == nil || s.Placement == nil {
		return nil
	}
	per := deviceInstances(s, nil)
	out := make([][]Ref, len(per))
	for d, xs := range per {
		out[d] = make([]Ref, len(xs))
		for i, x := range xs {
			out[d][i] = s.Instances[x].Ref()
		}
	}
	return out
}

// Sort puts s.Instances in file order: by start time, then the first device
// of the block, then block index, then micro-batch.
func (s *Schedule) Sort() { sortInstances(s.Placement, s.Instances) }

func sortInstances(p *placement.Placement, ins []Instance) {
	var firstDev []int
	if p != nil {
		firstDev = make([]int, len(p.Blocks))
		for i, b := range p.Blocks {
			firstDev[i] = -1
			if len(b.Devices) > 0 {
				firstDev[i] = b.Devices[0]
			}
		}
	}
	dev := func(b int) int {
		if b < 0 || b >= len(firstDev) {
			return -1
		}
		return firstDev[b]
	}
	// Equal keys are equal instances, so an unstable sort is deterministic.
	// Field by field, stopping at the first that differs (cmp.Or
	// compares them all).
	slices.SortFunc(ins, func(x, y Instance) int {
		if x.Start != y.Start {
			return cmp.Compare(x.Start, y.Start)
		}
		return cmp.Or(cmp.Compare(dev(x.Block), dev(y.Block)), cmp.Compare(x.Block, y.Block), cmp.Compare(x.Micro, y.Micro))
	})
}

// StartOrder is s's instances by start time, then block index, then
// micro-batch (a copy): one order for every device, so that instances on
// device groups never cross, as a list schedule that follows s takes them.
func StartOrder(s *Schedule) []Instance {
	ins := slices.Clone(s.Instances)
	slices.SortStableFunc(ins, func(a, b Instance) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Block, b.Block), cmp.Compare(a.Micro, b.Micro))
	})
	return ins
}

// SortInstances sorts ins as Sort does a schedule's instances on p.
func SortInstances(p *placement.Placement, ins []Instance) { sortInstances(p, ins) }
