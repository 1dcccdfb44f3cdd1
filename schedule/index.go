package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// What the verifier (package verify) and the rules read of a schedule:
// its instances by device, the names of instances, the transfers booked
// under a recorded link order.

// RefName is B_i^n as people read it, e.g. "f1^2".
func RefName(s *Schedule, ref Ref) string { return refName(s, ref) }

func refName(s *Schedule, ref Ref) string {
	if s.Placement != nil && ref.Block >= 0 && ref.Block < len(s.Placement.Blocks) {
		return s.Placement.Blocks[ref.Block].ID + "^" + strconv.Itoa(ref.Micro)
	}
	return fmt.Sprintf("block#%d^%d", ref.Block, ref.Micro)
}

// Booking is one transfer T on one link: ready when its producer ended,
// over [Start, End).
type Booking struct {
	T                 placement.LinkTransfer
	Link              placement.Link
	Ready, Start, End int
}

// BookOrdered books the transfers of the producers ins (one instance per
// block and micro-batch, in the producer-start order) under a recorded
// link order: each link named in order books its transfers in the
// recorded order (those without a producer in ins skipped: the verifier
// reports them), every other link in the producer-start order, each
// transfer starting as soon as its producer has ended and its link is
// free (placement's LinkQueue.ArrivalOn). Links are independent queues,
// so the result does not depend on the order links are booked in; they
// come out by first appearance, each in its order.
func bookOrdered(p *placement.Placement, order []placement.LinkOrder, ins []Instance, succs [][]placement.Dep) []Booking {
	start := map[placement.LinkTransfer]int{}
	byLink := map[placement.Link][]placement.LinkTransfer{} // the producer-start order
	var links []placement.Link
	for _, in := range ins {
		for _, d := range succs[in.Block] {
			t := placement.LinkTransfer{Dep: d, Micro: in.Micro}
			start[t] = in.Start
			for _, l := range p.Links(d) {
				if _, seen := byLink[l]; !seen {
					links = append(links, l)
				}
				byLink[l] = append(byLink[l], t)
			}
		}
	}
	for _, o := range order {
		if _, seen := byLink[o.Link]; !seen {
			links = append(links, o.Link)
		}
		byLink[o.Link] = slices.Clone(o.Transfers)
	}
	q := p.NewLinkQueue()
	var out []Booking
	for _, l := range links {
		for _, t := range byLink[l] {
			s, ok := start[t]
			if !ok {
				continue
			}
			at, w := q.ArrivalOn(l, t.Dep, s)
			ready := s + p.Blocks[t.Dep.From].Time
			out = append(out, Booking{t, l, ready, ready + w, at})
		}
	}
	return out
}

// deviceInstances lists, for every device, the indices of the instances
// (among those with use[x], or all when use is nil) that occupy it, sorted by
// start time, then block index, then micro-batch, then index.
func deviceInstances(s *Schedule, use []bool) [][]int {
	p := s.Placement
	out := make([][]int, p.Devices)
	for x, in := range s.Instances {
		if use != nil && !use[x] {
			continue
		}
		if in.Block < 0 || in.Block >= len(p.Blocks) {
			continue
		}
		for _, d := range p.Blocks[in.Block].Devices {
			if d >= 0 && d < p.Devices {
				out[d] = append(out[d], x)
			}
		}
	}
	for _, xs := range out {
		slices.SortFunc(xs, func(a, b int) int { return compareStart(s.Instances, a, b) })
	}
	return out
}

// compareStart orders instances a and b of ins by start, block,
// micro-batch and index.
func compareStart(ins []Instance, a, b int) int {
	x, y := ins[a], ins[b]
	return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.Block, y.Block), cmp.Compare(x.Micro, y.Micro), cmp.Compare(a, b))
}

// intList formats [1 2 3] as "[1, 2, 3]".
func intList(xs []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	b.WriteByte(']')
	return b.String()
}

// DeviceInstances lists, for every device, the indices of the instances
// of s (among those with use[x], or all when use is nil) that occupy it,
// sorted by start time, then block index, then micro-batch, then index.
func DeviceInstances(s *Schedule, use []bool) [][]int { return deviceInstances(s, use) }

// CompareStart orders instances a and b of ins by start, block,
// micro-batch and index: the verifier's order.
func CompareStart(ins []Instance, a, b int) int { return compareStart(ins, a, b) }

// IntList formats [1 2 3] as "[1, 2, 3]".
func IntList(xs []int) string { return intList(xs) }

// BookOrdered books the transfers of the producers ins under a recorded
// link order (see bookOrdered).
func BookOrdered(p *placement.Placement, order []placement.LinkOrder, ins []Instance, succs [][]placement.Dep) []Booking {
	return bookOrdered(p, order, ins, succs)
}

// RoundRate rounds a rate to 6 decimals, as schedule files store it.
func RoundRate(x float64) float64 { return roundRate(x) }

// OccupancyUsing indexes the pairs of s marked in use (all when use is
// nil) that the placement's rule allows: what the verifier times the
// instances by once it has checked the pairs.
func OccupancyUsing(s *Schedule, use []bool) Occupancy {
	return Occupancy{pg: newPairing(s, use)}
}

// Together reports whether a and b run in one pair.
func (o Occupancy) Together(a, b Ref) bool { return o.pg.together(a, b) }

// MemoryChange is one change of a device's memory: an instance's start
// or a decision's free or return (MemoryChanges).
type MemoryChange struct {
	Time, Delta int
	Ref         Ref
	e           memEvent
}

// Text says what the change is, for the verifier's messages.
func (c MemoryChange) Text(s *Schedule) string { return eventName(s, c.e) }

// MemoryChanges lists, for every device, the changes of its memory in
// order: the starts of the instances xs[d] (from DeviceInstances) and the
// frees and returns of the decisions with useDec[k] (all that name an
// existing block when useDec is nil).
func MemoryChanges(s *Schedule, xs [][]int, useDec []bool) [][]MemoryChange {
	evs := memoryEvents(s, xs, useDec)
	out := make([][]MemoryChange, len(evs))
	for d, list := range evs {
		out[d] = make([]MemoryChange, len(list))
		for k, e := range list {
			out[d][k] = MemoryChange{Time: e.time, Delta: e.delta, Ref: Ref{e.block, e.micro}, e: e}
		}
	}
	return out
}

// PairGroup returns the instances pair q runs (the forward first), its
// time, and why not when the placement's rule refuses the pair; roles
// are p.Roles().
func PairGroup(p *placement.Placement, roles []placement.Role, q Pair) ([]Ref, int, string) {
	return groupRefs(p, roles, q)
}
