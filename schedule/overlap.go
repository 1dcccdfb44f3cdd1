package schedule

import (
	"cmp"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// Pair is one overlapped forward and backward (placement's Overlap): the
// forward instance Forward and the whole backward that the gradient
// instance Backward begins (with its weight instance, same block's weight
// and same micro-batch, where the backward is split) run as one action on
// their devices: all start together and all end after the pair's time
// (placement's OverlapGroup). The two are of different micro-batches.
type Pair struct {
	Forward  Ref
	Backward Ref
}

// pairing indexes the valid pairs of a schedule: for every instance of a
// pair, its group's lead (the forward) and the pair's time.
type pairing struct {
	lead map[Ref]Ref
	time map[Ref]int
}

func (pg *pairing) empty() bool { return pg == nil || len(pg.lead) == 0 }

// dur is how long instance r occupies its devices: the pair's time when r
// is paired, else its block's time.
func (pg *pairing) dur(p *placement.Placement, r Ref) int {
	if pg != nil {
		if t, ok := pg.time[r]; ok {
			return t
		}
	}
	return p.Blocks[r.Block].Time
}

// together reports whether a and b are in one pair.
func (pg *pairing) together(a, b Ref) bool {
	if pg == nil {
		return false
	}
	la, ok := pg.lead[a]
	lb, ok2 := pg.lead[b]
	return ok && ok2 && la == lb
}

// follower reports whether r is paired and not its pair's lead.
func (pg *pairing) follower(r Ref) bool {
	if pg == nil {
		return false
	}
	l, ok := pg.lead[r]
	return ok && l != r
}

// groupRefs returns the instances pair q runs (the forward first), its
// time, and why not when the placement's rule refuses the pair.
func groupRefs(p *placement.Placement, roles []placement.Role, q Pair) ([]Ref, int, string) {
	blocks, t, why := p.OverlapGroup(q.Forward.Block, q.Backward.Block, roles)
	if why != "" {
		return nil, 0, why
	}
	out := []Ref{q.Forward}
	for _, b := range blocks[1:] {
		out = append(out, Ref{b, q.Backward.Micro})
	}
	return out, t, ""
}

// newPairing indexes the pairs of s marked in use (all when use is nil)
// whose groups the placement's rule allows, skipping any that reuse an
// instance.
func newPairing(s *Schedule, use []bool) *pairing {
	if len(s.Pairs) == 0 || s.Placement == nil || s.Placement.Overlap == nil {
		return nil
	}
	p := s.Placement
	roles := p.Roles()
	pg := &pairing{lead: map[Ref]Ref{}, time: map[Ref]int{}}
	for k, q := range s.Pairs {
		if use != nil && !use[k] {
			continue
		}
		refs, t, why := groupRefs(p, roles, q)
		if why != "" || slices.ContainsFunc(refs, func(r Ref) bool { _, dup := pg.lead[r]; return dup }) {
			continue
		}
		for _, r := range refs {
			pg.lead[r], pg.time[r] = q.Forward, t
		}
	}
	return pg
}

// PairText names a pair as renderings show it: "f3^5+b4^2".
func PairText(s *Schedule, q Pair) string {
	return refName(s, q.Forward) + "+" + refName(s, q.Backward)
}

// SortPairs orders pairs by the forward's block and micro-batch, then the
// backward's (the file's order).
func SortPairs(ps []Pair) {
	slices.SortFunc(ps, func(a, b Pair) int {
		return cmp.Or(cmp.Compare(a.Forward.Block, b.Forward.Block), cmp.Compare(a.Forward.Micro, b.Forward.Micro),
			cmp.Compare(a.Backward.Block, b.Backward.Block), cmp.Compare(a.Backward.Micro, b.Backward.Micro))
	})
}

// OverlapPair: a pair the placement's rule does not allow (no rule, not a
// forward and a whole backward, different devices, the same
// micro-batch), an instance in two pairs, a pair whose instances do not
// start together, or pairs with what this rule does not combine with yet
// (channels, offload and recompute decisions).
const OverlapPair ViolationKind = "overlap-pair"

// Occupancy is how the valid pairs of a schedule occupy its devices, as
// the renderings draw them: an instance paired behind another runs inside
// its lead's action, which lasts the pair's time.
type Occupancy struct {
	pg      *pairing
	partner map[Ref]Ref
}

// OccupancyOf indexes the valid pairs of s.
func OccupancyOf(s *Schedule) Occupancy {
	return Occupancy{pg: newPairing(s, nil), partner: pairPartners(s)}
}

// Paired reports whether s has a valid pair.
func (o Occupancy) Paired() bool { return !o.pg.empty() }

// Follower reports whether r runs inside another instance's pair.
func (o Occupancy) Follower(r Ref) bool { return o.pg.follower(r) }

// Duration is how long r occupies its devices: its pair's time where it
// leads a pair, else its block's time on p.
func (o Occupancy) Duration(p *placement.Placement, r Ref) int { return o.pg.dur(p, r) }

// Partner is the backward paired with the forward r.
func (o Occupancy) Partner(r Ref) (Ref, bool) {
	g, ok := o.partner[r]
	return g, ok
}

// pairPartners maps the forward of every valid pair to its backward.
func pairPartners(s *Schedule) map[Ref]Ref {
	pg := newPairing(s, nil)
	if pg.empty() {
		return nil
	}
	out := map[Ref]Ref{}
	for _, q := range s.Pairs {
		if pg.lead[q.Forward] == q.Forward && pg.lead[q.Backward] == q.Forward {
			out[q.Forward] = q.Backward
		}
	}
	return out
}
