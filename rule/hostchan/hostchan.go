// Package hostchan is the rule of the decisions about activations — keep,
// offload to the host, recompute (placement's "Memory as a decision") —
// and of the host channels their offloads and reloads cross, one at a
// time: each decision names a present forward instance, once, with an
// action its block allows; an offload starts no earlier than its forward
// ends, its reload no earlier than the offload ends and ends no later than
// the consumer starts; a recompute starts no earlier than its forward ends
// and ends no later than the consumer starts; a recompute occupies its
// devices like a block (Checked.Reruns).
package hostchan

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is the decisions and the host channels.
type Rule struct{}

var _ interface {
	rule.Rule
	rule.Indexer
	rule.Retimer
	rule.Refuser
} = Rule{}

// Name is "hostchan".
func (Rule) Name() string { return "hostchan" }

// Title is "offload and recompute decisions" (rule.Titled).
func (Rule) Title() string { return "offload and recompute decisions" }

// On reports whether sp allows offload or recompute decisions.
func (Rule) On(sp spec.Spec) bool { return sp.Allowed.Offload || sp.Allowed.Recompute }

// Excludes is overlapped pairs (not timed with decisions yet).
func (Rule) Excludes() []string { return []string{"pairs"} }

// Index checks the decisions and the host channels, marks the decisions
// that take part in the device checks (Checked.Decided) and lists the
// recomputes on every device (Checked.Reruns).
func (Rule) Index(c *rule.Checked, r *rule.Report) {
	decisions(c, r)
	c.Reruns = deviceReruns(c)
}

// Check does nothing more: the device checks read the decisions marked.
func (Rule) Check(*rule.Checked, *rule.Report) {}

// decisions checks the schedule's decisions (placement's "Memory as a
// decision"): each names a present forward instance, once, with an action
// its block allows (BadDecision); an offload starts no earlier than its
// forward ends, its reload no earlier than the offload ends, and the
// reload ends no later than the consumer starts (OffloadTiming); a
// recompute starts no earlier than its forward ends and ends no later
// than the consumer starts (RecomputeTiming); on every host channel the
// offloads and reloads run one at a time (HostChannel). It marks the
// decisions that take part in the device checks (Checked.Decided).
func decisions(c *rule.Checked, r *rule.Report) {
	s := c.S
	if len(s.Decisions) == 0 {
		return
	}
	p := s.Placement
	consumers := p.Consumers()
	seen := map[schedule.Ref]int{}
	for k, dc := range s.Decisions {
		ref := dc.Ref()
		switch {
		case dc.Block < 0 || dc.Block >= len(p.Blocks):
			r.Add(schedule.BadDecision, -1, []schedule.Ref{ref}, "decision %d: block index %d out of range 0..%d", k, dc.Block, len(p.Blocks)-1)
			continue
		case dc.Micro < 0 || dc.Micro >= s.MicroBatches:
			r.Add(schedule.BadDecision, -1, []schedule.Ref{ref}, "decision %d: %s: micro-batch %d out of range 0..%d", k, c.Name(ref), dc.Micro, s.MicroBatches-1)
			continue
		case dc.Action != placement.Offload && dc.Action != placement.Recompute:
			r.Add(schedule.BadDecision, -1, []schedule.Ref{ref}, "decision %d: %s: action %q is not %q or %q", k, c.Name(ref), dc.Action, placement.Offload, placement.Recompute)
			continue
		case !p.Allows(dc.Block, dc.Action, consumers):
			r.Add(schedule.BadDecision, -1, []schedule.Ref{ref}, "%s: block %s does not allow %s (%s)", c.Name(ref), p.Blocks[dc.Block].ID, dc.Action, why(p, dc.Block, dc.Action, consumers))
			continue
		case dc.Start < 0 || dc.Start > schedule.MaxStart || dc.Reload < 0 || dc.Reload > schedule.MaxStart:
			r.Add(schedule.BadDecision, -1, []schedule.Ref{ref}, "%s: %s time out of range 0..%d", c.Name(ref), dc.Action, schedule.MaxStart)
			continue
		case dc.Action == placement.Recompute && dc.Reload != 0:
			r.Add(schedule.BadDecision, -1, []schedule.Ref{ref}, "%s: a recompute has no reload, got %d", c.Name(ref), dc.Reload)
			continue
		}
		if j, dup := seen[ref]; dup {
			r.Add(schedule.BadDecision, -1, []schedule.Ref{ref}, "%s decided twice (decisions %d and %d)", c.Name(ref), j, k)
			continue
		}
		seen[ref] = k
		x, ok := c.First[ref]
		if !ok {
			continue // reported as missing
		}
		c.Decided[k] = true
		end := c.End(x)
		cref := schedule.Ref{Block: consumers[dc.Block], Micro: dc.Micro}
		use, hasUse := 0, false
		if y, ok := c.First[cref]; ok {
			use, hasUse = s.Instances[y].Start, true
		}
		switch dc.Action {
		case placement.Offload:
			t := p.OffloadTime(dc.Block)
			if dc.Start < p.EarliestOffload(dc.Block, s.Instances[x].Start) {
				r.Add(schedule.OffloadTiming, -1, []schedule.Ref{ref}, "offload of %s starts at %d < %d, when %s ends", c.Name(ref), dc.Start, end, c.Name(ref))
			}
			if e := p.EarliestReload(dc.Block, dc.Start); dc.Reload < e {
				r.Add(schedule.OffloadTiming, -1, []schedule.Ref{ref}, "reload of %s starts at %d < %d, when its offload ends", c.Name(ref), dc.Reload, e)
			}
			if hasUse && dc.Reload > p.LatestReload(dc.Block, use) {
				r.Add(schedule.OffloadTiming, -1, []schedule.Ref{ref, cref}, "reload of %s ends at %d > %d, when %s starts", c.Name(ref), dc.Reload+t, use, c.Name(cref))
			}
		case placement.Recompute:
			if dc.Start < p.EarliestRecompute(dc.Block, s.Instances[x].Start) {
				r.Add(schedule.RecomputeTiming, -1, []schedule.Ref{ref}, "recompute of %s starts at %d < %d, when %s ends", c.Name(ref), dc.Start, end, c.Name(ref))
			}
			if hasUse && dc.Start > p.LatestRecompute(dc.Block, use) {
				r.Add(schedule.RecomputeTiming, -1, []schedule.Ref{ref, cref}, "recompute of %s ends at %d > %d, when %s starts", c.Name(ref), dc.Start+p.Blocks[dc.Block].Time, use, c.Name(cref))
			}
		}
	}
	channels(c, r)
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
func channels(c *rule.Checked, r *rule.Report) {
	s := c.S
	sub := &schedule.Schedule{Spec: spec.Spec{Placement: s.Placement}}
	for k, dc := range s.Decisions {
		if c.Decided[k] {
			sub.Decisions = append(sub.Decisions, dc)
		}
	}
	moves := schedule.Moves(sub)
	var last schedule.Move
	lastEnd, channel := math.MinInt, -1
	for _, m := range moves {
		if m.Channel != channel {
			channel, lastEnd = m.Channel, math.MinInt
		}
		if m.Start < lastEnd {
			r.Add(schedule.HostChannel, -1, []schedule.Ref{last.Ref, m.Ref}, "host channel %d carries two transfers at once: %s [%d,%d) and %s [%d,%d)",
				m.Channel, moveName(s, last), last.Start, last.End, moveName(s, m), m.Start, m.End)
		}
		if m.End > lastEnd {
			last, lastEnd = m, m.End
		}
	}
}

func moveName(s *schedule.Schedule, m schedule.Move) string {
	if m.Reload {
		return "the reload of " + schedule.RefName(s, m.Ref)
	}
	return "the offload of " + schedule.RefName(s, m.Ref)
}

// deviceReruns lists, for every device, the second runs of the decisions
// that take part in the checks.
func deviceReruns(c *rule.Checked) [][]schedule.Rerun {
	s := c.S
	out := make([][]schedule.Rerun, s.Placement.Devices)
	for k, dc := range s.Decisions {
		if !c.Decided[k] || dc.Action != placement.Recompute {
			continue
		}
		for _, d := range s.Placement.Blocks[dc.Block].Devices {
			out[d] = append(out[d], schedule.Rerun{Ref: dc.Ref(), Start: dc.Start})
		}
	}
	return out
}

// Refuse refuses a compaction that keeps a schedule (Retiming.From)
// with release times, and one that keeps decisions on links that carry
// one transfer at a time (the decisions' system has no topological pass
// to book the link queues in).
func (Rule) Refuse(t *rule.Retiming) error {
	if t.From == nil {
		return nil
	}
	if t.Release != nil {
		// The words of the release times under a budget (rule/latency's).
		return errors.New("release times with decisions or a latency budget")
	}
	if len(t.From.Decisions) > 0 && links.Queued(t.From.Placement) {
		return errors.New("a schedule that offloads or recomputes on links that carry one transfer at a time")
	}
	return nil
}

// Constrain adds the decisions to a compaction that keeps a schedule's
// decisions (Retiming.From): their variables, two per decision after
// those made so far (its start, then its reload's; Retiming.Decision),
// with the schedule's times as their hints, and their timing: an offload
// starts after its forward ends, its reload after the move out ends,
// the consumer after the move back ends; a recompute starts after its
// forward ends and ends before the consumer starts; every host channel
// keeps its order of offloads and reloads (by their given starts, then
// block, micro-batch and move), one after another.
func (Rule) Constrain(t *rule.Retiming) error {
	s := t.From
	if s == nil || len(s.Decisions) == 0 {
		return nil
	}
	first := t.Sys.Var(2 * len(s.Decisions))
	if t.Sys.Hint != nil {
		for k, dc := range s.Decisions {
			t.Sys.Hint[first+2*k], t.Sys.Hint[first+2*k+1] = dc.Start, dc.Reload
		}
	}
	t.Decision = func(k int) int { return first + 2*k }
	p := s.Placement
	consumers := p.Consumers()
	type move struct{ v, off, time, block, micro, seq int }
	chans := map[int][]move{}
	for k, dc := range s.Decisions {
		f := t.Var(dc.Ref())
		use := t.Var(schedule.Ref{Block: consumers[dc.Block], Micro: dc.Micro})
		st := t.Decision(k)
		rl := st + 1
		bt := p.Blocks[dc.Block].Time
		switch dc.Action {
		case placement.Offload:
			tt := p.OffloadTime(dc.Block)
			t.Sys.Add(st, f, bt)
			t.Sys.Add(rl, st, tt)
			t.Sys.Add(use, rl, tt)
			for _, ch := range p.BlockSwitches(dc.Block) {
				chans[ch] = append(chans[ch], move{v: st, off: tt, time: dc.Start, block: dc.Block, micro: dc.Micro, seq: 2 * k},
					move{v: rl, off: tt, time: dc.Reload, block: dc.Block, micro: dc.Micro, seq: 2*k + 1})
			}
		case placement.Recompute:
			t.Sys.Add(st, f, bt)
			t.Sys.Add(use, st, bt)
			t.Sys.Add(rl, -1, 0) // unused: pinned at 0
		}
	}
	for _, list := range chans {
		slices.SortFunc(list, func(a, b move) int {
			return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(a.block, b.block), cmp.Compare(a.micro, b.micro), cmp.Compare(a.seq, b.seq))
		})
		for k := 1; k < len(list); k++ {
			t.Sys.Add(list[k].v, list[k-1].v, list[k-1].off)
		}
	}
	return nil
}
