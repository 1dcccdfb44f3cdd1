package schedule

import (
	"cmp"
	"math"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// decisions checks the schedule's decisions (placement's "Memory as a
// decision"): each names a present forward instance, once, with an action
// its block allows (BadDecision); an offload starts no earlier than its
// forward ends, its reload no earlier than the offload ends, and the
// reload ends no later than the consumer starts (OffloadTiming); a
// recompute starts no earlier than its forward ends and ends no later
// than the consumer starts (RecomputeTiming); on every host channel the
// offloads and reloads run one at a time (HostChannel). It marks the
// decisions that take part in the device checks (okDec).
func (v *verifier) decisions(r *report) {
	s := v.s
	if len(s.Decisions) == 0 {
		return
	}
	p := s.Placement
	consumers := p.Consumers()
	seen := map[Ref]int{}
	for k, dc := range s.Decisions {
		ref := dc.Ref()
		switch {
		case dc.Block < 0 || dc.Block >= len(p.Blocks):
			r.add(BadDecision, -1, []Ref{ref}, "decision %d: block index %d out of range 0..%d", k, dc.Block, len(p.Blocks)-1)
			continue
		case dc.Micro < 0 || dc.Micro >= s.MicroBatches:
			r.add(BadDecision, -1, []Ref{ref}, "decision %d: %s: micro-batch %d out of range 0..%d", k, v.name(ref), dc.Micro, s.MicroBatches-1)
			continue
		case dc.Action != placement.Offload && dc.Action != placement.Recompute:
			r.add(BadDecision, -1, []Ref{ref}, "decision %d: %s: action %q is not %q or %q", k, v.name(ref), dc.Action, placement.Offload, placement.Recompute)
			continue
		case !p.Allows(dc.Block, dc.Action, consumers):
			r.add(BadDecision, -1, []Ref{ref}, "%s: block %s does not allow %s (%s)", v.name(ref), p.Blocks[dc.Block].ID, dc.Action, why(p, dc.Block, dc.Action, consumers))
			continue
		case dc.Start < 0 || dc.Start > MaxStart || dc.Reload < 0 || dc.Reload > MaxStart:
			r.add(BadDecision, -1, []Ref{ref}, "%s: %s time out of range 0..%d", v.name(ref), dc.Action, MaxStart)
			continue
		case dc.Action == placement.Recompute && dc.Reload != 0:
			r.add(BadDecision, -1, []Ref{ref}, "%s: a recompute has no reload, got %d", v.name(ref), dc.Reload)
			continue
		}
		if j, dup := seen[ref]; dup {
			r.add(BadDecision, -1, []Ref{ref}, "%s decided twice (decisions %d and %d)", v.name(ref), j, k)
			continue
		}
		seen[ref] = k
		x, ok := v.first[ref]
		if !ok {
			continue // reported as missing
		}
		v.okDec[k] = true
		end := v.end(x)
		cref := Ref{consumers[dc.Block], dc.Micro}
		use, hasUse := 0, false
		if y, ok := v.first[cref]; ok {
			use, hasUse = s.Instances[y].Start, true
		}
		switch dc.Action {
		case placement.Offload:
			t := p.OffloadTime(dc.Block)
			if dc.Start < p.EarliestOffload(dc.Block, s.Instances[x].Start) {
				r.add(OffloadTiming, -1, []Ref{ref}, "offload of %s starts at %d < %d, when %s ends", v.name(ref), dc.Start, end, v.name(ref))
			}
			if e := p.EarliestReload(dc.Block, dc.Start); dc.Reload < e {
				r.add(OffloadTiming, -1, []Ref{ref}, "reload of %s starts at %d < %d, when its offload ends", v.name(ref), dc.Reload, e)
			}
			if hasUse && dc.Reload > p.LatestReload(dc.Block, use) {
				r.add(OffloadTiming, -1, []Ref{ref, cref}, "reload of %s ends at %d > %d, when %s starts", v.name(ref), dc.Reload+t, use, v.name(cref))
			}
		case placement.Recompute:
			if dc.Start < p.EarliestRecompute(dc.Block, s.Instances[x].Start) {
				r.add(RecomputeTiming, -1, []Ref{ref}, "recompute of %s starts at %d < %d, when %s ends", v.name(ref), dc.Start, end, v.name(ref))
			}
			if hasUse && dc.Start > p.LatestRecompute(dc.Block, use) {
				r.add(RecomputeTiming, -1, []Ref{ref, cref}, "recompute of %s ends at %d > %d, when %s starts", v.name(ref), dc.Start+p.Blocks[dc.Block].Time, use, v.name(cref))
			}
		}
	}
	v.channels(r)
}

// why says why block i does not allow action a.
func why(p *placement.Placement, i int, a placement.Action, consumers []int) string {
	b := p.Blocks[i]
	switch {
	case b.Kind != placement.Forward:
		return "not a forward block"
	case consumers[i] < 0:
		return "no gradient block uses its activation"
	case b.Memory <= 0:
		return "its memory is not positive"
	case a == placement.Offload:
		return "no offload time declared"
	}
	return "not declared recomputable"
}

// channels reports every offload or reload that starts before the latest
// end among those started before it on the same host channel, naming that
// one.
func (v *verifier) channels(r *report) {
	s := v.s
	sub := &Schedule{Spec: spec.Spec{Placement: s.Placement}}
	for k, dc := range s.Decisions {
		if v.okDec[k] {
			sub.Decisions = append(sub.Decisions, dc)
		}
	}
	moves := Moves(sub)
	var last Move
	lastEnd, channel := math.MinInt, -1
	for _, m := range moves {
		if m.Channel != channel {
			channel, lastEnd = m.Channel, math.MinInt
		}
		if m.Start < lastEnd {
			r.add(HostChannel, -1, []Ref{last.Ref, m.Ref}, "host channel %d carries two transfers at once: %s [%d,%d) and %s [%d,%d)",
				m.Channel, moveName(s, last), last.Start, last.End, moveName(s, m), m.Start, m.End)
		}
		if m.End > lastEnd {
			last, lastEnd = m, m.End
		}
	}
}

func moveName(s *Schedule, m Move) string {
	if m.Reload {
		return "the reload of " + refName(s, m.Ref)
	}
	return "the offload of " + refName(s, m.Ref)
}

// deviceReruns lists, for every device, the second runs of the decisions
// that take part in the checks.
func (v *verifier) deviceReruns() [][]Rerun {
	s := v.s
	out := make([][]Rerun, s.Placement.Devices)
	for k, dc := range s.Decisions {
		if !v.okDec[k] || dc.Action != placement.Recompute {
			continue
		}
		for _, d := range s.Placement.Blocks[dc.Block].Devices {
			out[d] = append(out[d], Rerun{dc.Ref(), dc.Start})
		}
	}
	return out
}

// overlapsWithReruns is overlaps on a device that also runs recomputes.
func (v *verifier) overlapsWithReruns(r *report, d int, xs []int, reruns []Rerun) {
	type busy struct {
		ref        Ref
		start, end int
		again      bool
		x          int
	}
	p := v.s.Placement
	var items []busy
	for _, x := range xs {
		in := v.s.Instances[x]
		items = append(items, busy{in.Ref(), in.Start, v.end(x), false, x})
	}
	for _, rr := range reruns {
		items = append(items, busy{rr.Ref, rr.Start, rr.Start + p.Blocks[rr.Ref.Block].Time, true, -1})
	}
	slices.SortFunc(items, func(a, b busy) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.ref.Block, b.ref.Block), cmp.Compare(a.ref.Micro, b.ref.Micro),
			cmpBool(a.again, b.again), cmp.Compare(a.x, b.x))
	})
	name := func(b busy) string {
		if b.again {
			return "the recompute of " + v.name(b.ref)
		}
		return v.name(b.ref)
	}
	var last busy
	lastEnd := math.MinInt
	for _, b := range items {
		if b.start < lastEnd {
			r.add(Overlap, d, []Ref{last.ref, b.ref}, "overlap on device %d: %s [%d,%d) and %s [%d,%d)",
				d, name(last), last.start, last.end, name(b), b.start, b.end)
		}
		if b.end > lastEnd {
			last, lastEnd = b, b.end
		}
	}
}
