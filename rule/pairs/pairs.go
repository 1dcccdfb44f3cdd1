// Package pairs is the rule of overlapped pairs (placement's Overlap,
// DualPipe's F&B): a forward and a whole backward of another micro-batch
// run as one action on their devices — all start together and end after
// the pair's time (placement's OverlapGroup) — and an instance is in one
// pair at most.
package pairs

import (
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is overlapped pairs.
type Rule struct{}

var _ interface {
	rule.Rule
	rule.Indexer
	rule.Relaxer
} = Rule{}

// Name is "pairs".
func (Rule) Name() string { return "pairs" }

// Title is "overlapped forward and backward pairs" (rule.Titled).
func (Rule) Title() string { return "overlapped forward and backward pairs" }

// On reports whether sp's placement lets forwards and backwards overlap.
func (Rule) On(sp spec.Spec) bool { return sp.Placement.Overlap != nil }

// Excludes is links that carry one transfer at a time and the decisions
// (host channels): pairs are not timed with them yet.
func (Rule) Excludes() []string { return []string{"links", "hostchan"} }

// Check does nothing more: the timing checks read the pairs indexed.
func (Rule) Check(*rule.Checked, *rule.Report) {}

// Index checks the schedule's pairs and indexes the valid ones for the
// timing checks (Checked.Pairs).
func (Rule) Index(c *rule.Checked, r *rule.Report) {
	s := c.S
	if len(s.Pairs) == 0 {
		return
	}
	p := s.Placement
	use := make([]bool, len(s.Pairs))
	if (links.Rule{}).On(s.Spec) {
		r.Add(schedule.OverlapPair, -1, nil, "overlapped pairs on a cluster with channels: not supported")
		return
	}
	if len(s.Decisions) > 0 {
		r.Add(schedule.OverlapPair, -1, nil, "overlapped pairs with offload or recompute decisions: not supported")
		return
	}
	roles := p.Roles()
	taken := map[schedule.Ref]int{}
	for k, q := range s.Pairs {
		name := "pair " + schedule.PairText(s, q)
		refs := []schedule.Ref{q.Forward, q.Backward}
		if q.Forward.Micro == q.Backward.Micro {
			r.Add(schedule.OverlapPair, -1, refs, "%s: the forward and the backward are of one micro-batch (an overlapped pair runs two)", name)
			continue
		}
		group, _, why := schedule.PairGroup(p, roles, q)
		if why != "" {
			r.Add(schedule.OverlapPair, -1, refs, "%s: %s", name, why)
			continue
		}
		ok := true
		start := -1
		for _, g := range group {
			x, present := c.First[g]
			if !present {
				ok = false // reported as missing or out of range
				break
			}
			if j, dup := taken[g]; dup {
				r.Add(schedule.OverlapPair, -1, refs, "%s: %s is also in pair %s", name, c.Name(g), schedule.PairText(s, s.Pairs[j]))
				ok = false
				break
			}
			if st := s.Instances[x].Start; start < 0 {
				start = st
			} else if st != start {
				r.Add(schedule.OverlapPair, -1, refs, "%s: %s starts at %d, not with %s at %d (an overlapped pair starts together)",
					name, c.Name(g), st, c.Name(q.Forward), start)
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for _, g := range group {
			taken[g] = k
		}
		use[k] = true
	}
	c.Pairs = schedule.OccupancyUsing(s, use)
}
