package placement

import (
	"maps"
	"slices"
)

// Timing is the placement as timed: what a cluster sets on a placement
// (cluster.Apply, in one place), none of it in the placement file. A
// placement read from a file, or built in, has a zero Timing: that is
// the placement as written, every transfer 0, no capacities, links that
// overlap their transfers, a host channel per device and no costs of
// choices. Placement embeds it, so p.Transfers reads through; Bare, Clone
// and Equal handle it as one value.
type Timing struct {
	// Transfers is c_ij of a dependency, by dependency; nil means every
	// transfer is 0 (docs/formats.md, "Cluster file"). Keyed by Dep
	// rather than by position in Deps so that it survives code that
	// filters or reorders Deps, and so that Transfer looks up exactly
	// what it is given.
	Transfers map[Dep]int
	// Capacities is each device's memory capacity (docs/formats.md,
	// "Cluster file"); nil, or 0 for a device, means no capacity of its
	// own. Budget combines it with the one budget a search is given.
	Capacities []int
	// QueuedLinks, set by a cluster whose links carry one transfer at a
	// time (the cluster file's "channels", --channels; docs/design.md,
	// "Links"), makes every link a queue, a resource: the transfers
	// that cross one link (Links) run one after another, each taking its
	// dependency's Transfer time, in the order their producers start. When
	// false, transfers overlap freely and Delay is the whole rule. How a
	// schedule's transfers queue on a link is package schedule's
	// (LinkTimes): it depends on the schedule, not on the placement.
	QueuedLinks bool
	// Lanes, set by a cluster whose device pairs have several links (and
	// QueuedLinks), is for a dependency between blocks on one device each
	// the time its transfer takes on each link of the pair, in the
	// cluster's order (at least two; the least is its Transfer). With
	// QueuedLinks each of those links is a queue of its own, and the
	// transfer takes the one where it ends first (LinkQueue). A
	// dependency not in it crosses one link per device pair.
	Lanes map[Dep][]int
	// Switches is, for every device, the PCIe switch it sits on (the
	// cluster file's "switch"), named by the least device on it: devices
	// on one switch share one host channel for their offloads and
	// reloads (HostChannel). nil means every device has a switch, and so
	// a host channel, of its own.
	Switches []int
	// Costs, set by a cluster on a placement with candidates, is what
	// every choice costs; nil means a block's Time on every group and
	// transfers of 0.
	Costs *Costs
}

// onDevices is the part of t that belongs to the devices rather than to
// blocks or dependencies: the capacities, the link queues and the host
// channels (Bare).
func (t *Timing) onDevices() Timing {
	return Timing{Capacities: slices.Clone(t.Capacities), QueuedLinks: t.QueuedLinks, Switches: slices.Clone(t.Switches)}
}

// clone returns a deep copy of t.
func (t *Timing) clone() Timing {
	q := t.onDevices()
	q.Transfers, q.Costs = maps.Clone(t.Transfers), t.Costs.clone()
	if t.Lanes != nil {
		q.Lanes = make(map[Dep][]int, len(t.Lanes))
		for d, ts := range t.Lanes {
			q.Lanes[d] = slices.Clone(ts)
		}
	}
	return q
}

// timedAlike reports whether p and q, placements of the same devices and
// dependencies, are timed alike (Equal): the same link queues, the same
// transfer time and lanes on each dependency, and the same capacity and
// host channel on each device. A missing transfer equals one of 0, and
// missing capacities or host channels equal a capacity of 0 or a channel
// of its own. The costs of choices are not compared: they follow from
// the blocks' candidates and the cluster.
func (p *Placement) timedAlike(q *Placement) bool {
	if p.QueuedLinks != q.QueuedLinks {
		return false
	}
	for _, d := range p.Deps {
		if p.Transfers[d] != q.Transfers[d] || !slices.Equal(p.Lanes[d], q.Lanes[d]) {
			return false
		}
	}
	for d := range p.Devices {
		if p.Budget(d, 0) != q.Budget(d, 0) || p.HostChannel(d) != q.HostChannel(d) {
			return false
		}
	}
	return true
}
