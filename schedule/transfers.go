package schedule

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// TransferSpan is one tensor crossing one link: dependency Dep's tensor of
// micro-batch Micro on Link, over [Start, End).
type TransferSpan struct {
	Dep        placement.Dep
	Micro      int
	Link       placement.Link
	Start, End int
}

// Transfers lists every transfer of s that takes time, on every link its
// tensor crosses (placement's Links), timed by the one dependency rule:
// from its producer's end, and with channels (placement's Channels) after
// the transfers booked before it on the link (placement's LinkQueue, in
// its order: producers by start, block and micro-batch). The order is the
// booking order. Instances of unknown blocks and repeated instances are
// skipped, as the verifier skips them.
func Transfers(s *Schedule) []TransferSpan {
	if s == nil || s.Placement == nil || s.Placement.Transfers == nil {
		return nil
	}
	p := s.Placement
	seen := map[Ref]bool{}
	var ins []Instance
	for _, in := range s.Instances {
		if in.Block < 0 || in.Block >= len(p.Blocks) || seen[in.Ref()] {
			continue
		}
		seen[in.Ref()] = true
		ins = append(ins, in)
	}
	slices.SortStableFunc(ins, func(x, y Instance) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.Block, y.Block), cmp.Compare(x.Micro, y.Micro))
	})
	succs := p.SuccDeps()
	q := p.NewLinkQueue()
	var out []TransferSpan
	for _, in := range ins {
		end := in.Start + p.Blocks[in.Block].Time
		for _, d := range succs[in.Block] {
			c := p.Transfer(d)
			if c == 0 {
				continue
			}
			for _, l := range p.Links(d) {
				start := end
				if p.Channels {
					start = max(end, q.Free(l))
				}
				out = append(out, TransferSpan{Dep: d, Micro: in.Micro, Link: l, Start: start, End: start + c})
			}
			q.Arrival(d, in.Start)
		}
	}
	return out
}

// linkRows is the links the renderings draw a row for, in order (from
// device, then to device), and each transfer's row: only for a placement
// whose blocks chose their devices (placement's HasCandidates), where
// transfers take time; none otherwise, so that the renderings of pinned
// placements stay as they were.
func linkRows(s *Schedule) (links []placement.Link, spans []TransferSpan) {
	if !s.Placement.HasCandidates() {
		return nil, nil
	}
	spans = Transfers(s)
	for _, t := range spans {
		if !slices.Contains(links, t.Link) {
			links = append(links, t.Link)
		}
	}
	slices.SortFunc(links, func(a, b placement.Link) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return links, spans
}

// transferName is how the renderings name a transfer: "op3→op7^0".
func transferName(p *placement.Placement, t TransferSpan) string {
	return fmt.Sprintf("%s→%s^%d", p.Blocks[t.Dep.From].ID, p.Blocks[t.Dep.To].ID, t.Micro)
}
