// Package links is the rule of links that carry one transfer at a time
// (placement's Channels, set by a cluster): a tensor leaves its producer's
// devices after the transfers booked before it on each link it crosses
// (placement's LinkQueue, producers by start, block and micro-batch), or
// in a recorded link order (schedule.Schedule.LinkOrder), and its consumer
// starts no earlier than it arrives.
package links

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is links that carry one transfer at a time.
type Rule struct{}

var _ interface {
	rule.Rule
	rule.Indexer
	rule.Bounder
	rule.Retimer
} = Rule{}

// Name is "links".
func (Rule) Name() string { return "links" }

// Title is "links that carry one transfer at a time" (rule.Titled).
func (Rule) Title() string { return "links that carry one transfer at a time" }

// On reports whether sp's links carry one transfer at a time.
func (Rule) On(sp spec.Spec) bool { return Queued(sp.Placement) }

// Queued reports whether p's links carry one transfer at a time
// (placement's Channels, set by a cluster): its transfers queue on them
// (placement's LinkQueue). It is On for code that holds a placement and
// no spec; p may be nil (no links).
func Queued(p *placement.Placement) bool { return p != nil && p.QueuedLinks }

// Excludes is overlapped pairs (not timed on queued links yet).
func (Rule) Excludes() []string { return []string{"pairs"} }

// By names the links' argument of the makespan bound.
const By bound.MakespanBound = "a link's load"

// Bound raises b, at bound.Loads, by the links' loads: for every link ℓ
// the same argument as for a device, since it carries n·load_ℓ of
// transfers one at a time (load_ℓ, the transfer times of the dependencies
// that cross ℓ), the first no earlier than the least end of their
// producers in one micro-batch (head + time), the last followed by the
// least time and tail of their consumers. The period is then at least
// max_ℓ load_ℓ too.
func (Rule) Bound(sp spec.Spec, at bound.Step, b *bound.Bounds) {
	if at == bound.Loads {
		linkBounds(sp.Placement, sp.MicroBatches, b)
	}
}

// Constrain sets the compaction's visit where the spec's links carry one
// transfer at a time: a tensor also waits for the transfers booked before
// it on its links (placement's LinkQueue). The producers of a link all
// run on the link's first device, and the topological pass takes them in
// that device's order, which is their start order: the order in which
// the link queue books them. A compaction that keeps a schedule's
// decisions has no such pass (decisions on such links are refused).
func (Rule) Constrain(t *rule.Retiming) error {
	p := t.Spec.Placement
	if !Queued(p) || t.Ref == nil {
		return nil
	}
	queue, succDeps := p.NewLinkQueue(), p.SuccDeps()
	t.Visit = func(u int, start []int) {
		r := t.Ref(u)
		for _, d := range succDeps[r.Block] {
			w := t.Var(schedule.Ref{Block: d.To, Micro: r.Micro})
			at, _, _ := queue.Arrival(d, start[u])
			start[w] = max(start[w], at)
		}
	}
	return nil
}

// Index checks the recorded link order and books every transfer on its
// links: the arrivals the dependencies are checked against
// (Checked.Arrivals).
func (Rule) Index(c *rule.Checked, r *rule.Report) {
	linkOrder(c, r)
	c.Arrivals = arrivals(c)
}

// Check does nothing more: the dependency check reads the arrivals.
func (Rule) Check(*rule.Checked, *rule.Report) {}

// arrivals books, with channels, every transfer of the present instances
// on its links in the rule's order (producers by start, block and
// micro-batch; placement's LinkQueue) and returns when each tensor
// arrives. Without channels it is nil: every tensor arrives at its
// producer's start plus Delay.
func arrivals(c *rule.Checked) map[placement.LinkTransfer]rule.Arrival {
	p := c.S.Placement
	if !p.QueuedLinks {
		return nil
	}
	var xs []int
	for x := range c.S.Instances {
		if c.Present(x) {
			xs = append(xs, x)
		}
	}
	slices.SortFunc(xs, func(a, b int) int { return schedule.CompareStart(c.S.Instances, a, b) })
	succs := p.SuccDeps()
	if c.S.LinkOrder != nil {
		return orderedArrivals(c, xs, succs)
	}
	q := p.NewLinkQueue()
	out := map[placement.LinkTransfer]rule.Arrival{}
	for _, x := range xs {
		in := c.S.Instances[x]
		for _, d := range succs[in.Block] {
			at, waited, busy := q.Arrival(d, in.Start)
			out[placement.LinkTransfer{Dep: d, Micro: in.Micro}] = rule.Arrival{At: at, Waited: waited, Busy: busy}
		}
	}
	return out
}

// orderedArrivals is arrivals under a recorded link order (bookOrdered):
// a tensor arrives when its transfer has ended on the last of its links.
func orderedArrivals(c *rule.Checked, xs []int, succs [][]placement.Dep) map[placement.LinkTransfer]rule.Arrival {
	ins := make([]schedule.Instance, len(xs))
	for k, x := range xs {
		ins[k] = c.S.Instances[x]
	}
	out := map[placement.LinkTransfer]rule.Arrival{}
	for _, b := range schedule.BookOrdered(c.S.Placement, c.S.LinkOrder, ins, succs) {
		a := out[b.T]
		if w := b.Start - b.Ready; w > a.Waited {
			a.Waited, a.Busy = w, b.Link
		}
		a.At = max(a.At, b.End)
		out[b.T] = a
	}
	return out
}

// linkOrder checks the recorded link order (schedule.Schedule.LinkOrder): each
// link named once, a link some transfer with time crosses, and listing
// every present transfer that crosses it exactly once. Without channels
// a recorded order is an error: no transfer waits for a link.
func linkOrder(c *rule.Checked, r *rule.Report) {
	s := c.S
	if s.LinkOrder == nil {
		return
	}
	p := s.Placement
	if !p.QueuedLinks {
		r.Add(schedule.BadLinkOrder, -1, nil, "link order recorded but the placement has no channels")
		return
	}
	present := map[placement.LinkTransfer]bool{}
	cross := map[placement.Link][]placement.LinkTransfer{}
	succs := p.SuccDeps()
	for x, in := range s.Instances {
		if !c.Present(x) {
			continue
		}
		for _, d := range succs[in.Block] {
			t := placement.LinkTransfer{Dep: d, Micro: in.Micro}
			present[t] = true
			for _, l := range p.Links(d) {
				cross[l] = append(cross[l], t)
			}
		}
	}
	named := map[placement.Link]bool{}
	for _, o := range s.LinkOrder {
		l := o.Link
		if named[l] {
			r.Add(schedule.BadLinkOrder, -1, nil, "link order: link %d->%d named twice", l.From, l.To)
			continue
		}
		named[l] = true
		seen := map[placement.LinkTransfer]bool{}
		for _, t := range o.Transfers {
			k := t
			if !slices.Contains(p.Deps, t.Dep) {
				r.Add(schedule.BadLinkOrder, -1, nil, "link order of link %d->%d: no dependency %d -> %d", l.From, l.To, t.Dep.From, t.Dep.To)
				continue
			}
			name := transferName(c, k)
			switch {
			case !slices.Contains(p.Links(t.Dep), l):
				r.Add(schedule.BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s does not cross it", l.From, l.To, name)
			case !present[k]:
				r.Add(schedule.BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s has no producer in the schedule", l.From, l.To, name)
			case seen[k]:
				r.Add(schedule.BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s listed twice", l.From, l.To, name)
			}
			seen[k] = true
		}
		for _, k := range cross[l] {
			if !seen[k] {
				r.Add(schedule.BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s missing", l.From, l.To, transferName(c, k))
			}
		}
	}
}

// transferName is "f0 -> f1 of micro-batch 2".
func transferName(c *rule.Checked, t placement.LinkTransfer) string {
	p := c.S.Placement
	return fmt.Sprintf("%s -> %s of micro-batch %d", p.Blocks[t.Dep.From].ID, p.Blocks[t.Dep.To].ID, t.Micro)
}
