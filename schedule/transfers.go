package schedule

import (
	"cmp"
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
// from its producer's end, and with queued links (placement's QueuedLinks) after
// the transfers booked before it on the link (placement's LinkQueue, in
// its order: producers by start, block and micro-batch). The order is the
// booking order. With a recorded link order (Schedule.LinkOrder) the
// links named take their transfers in it, and the spans come link by
// link. Instances of unknown blocks and repeated instances are
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
	if p.QueuedLinks && s.LinkOrder != nil {
		// A recorded order (Schedule.LinkOrder): link by link, each in
		// its order, as the verifier books them.
		var out []TransferSpan
		for _, b := range bookOrdered(p, s.LinkOrder, ins, succs) {
			out = append(out, TransferSpan{Dep: b.T.Dep, Micro: b.T.Micro, Link: b.Link, Start: b.Start, End: b.End})
		}
		return out
	}
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
				if p.QueuedLinks {
					start = max(end, q.Free(l))
				}
				out = append(out, TransferSpan{Dep: d, Micro: in.Micro, Link: l, Start: start, End: start + c})
			}
			q.Arrival(d, in.Start)
		}
	}
	return out
}
