package search

import (
	"context"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// DeviceBound is a lower bound of the makespan of opt.MicroBatches
// micro-batches of p under opt's budget and decisions, from one device
// alone: the time-optimal search (Optimal, within ctx and opt.Effort) of
// the device's own blocks, with the rest of the pipeline reduced to the
// delays it imposes between them. Its proven bound holds for p because
// that problem is a relaxation of p's (DeviceRelaxation): every schedule
// of p gives one of it that ends no later. Where the device's memory, host
// channel or decisions bind, it can exceed the relaxations of
// schedule.LowerBounds, which count memory and moves apart from the order
// of the device's own work.
func DeviceBound(ctx context.Context, p *placement.Placement, device int, opt OptimalOptions) (OptimalBound, error) {
	q, err := DeviceRelaxation(p, device, opt.Memory)
	if err != nil {
		return OptimalBound{}, err
	}
	o := opt
	o.Memory = 0 // q carries the device's budget as a capacity
	res, err := Optimal(ctx, q, o)
	if err != nil {
		return OptimalBound{}, fmt.Errorf("search: device %d of placement %q alone: %w", device, p.Name, err)
	}
	return res.Bound, nil
}

// DeviceRelaxation is the problem of device d's own blocks with the rest
// of p reduced to delays: device 0 runs every block of p on d (with its
// memory, offload and recompute, under d's budget); a block that runs on
// a group with d gets, beside device 0, a device of its group's own (the
// group's other devices run its instances one at a time too). Every other
// block is gone; in its place stand blocks of time 1 on devices of their
// own, each with dependencies whose transfer times make up the longest
// path it stands for:
//
//   - between two kept blocks i and j, joined by paths through removed
//     blocks only, one block after i whose delays make j wait the longest
//     such path (its first block's start, then the rest);
//   - before a kept block that such a path reaches from a first block, one
//     block whose delay makes it wait for that path (head);
//   - after a kept block from which such a path leads to a last block, one
//     block that ends no earlier than that path does (tail).
//
// Proof that it relaxes p: in a schedule of p, run every kept block at its
// time, and each stand-in block in the first (last, for a tail) unit of
// time of the removed block it stands for, the first of its path (the
// last, for a tail). Kept blocks ran one at a time on d and their memory
// was d's; each stand-in block's device runs the instances of one removed
// block, which ran one at a time on its devices; a group's device runs
// the instances of blocks on that group, which ran one at a time on its
// other devices. Every dependency of the relaxation holds, being a part of
// a path of p; the makespan is no later. Links that queue (Channels) are
// left out, which only allows more (so are a shared host channel's other
// devices, and links but the fastest of a pair). The forward and gradient blocks keep
// their pairs (placement's Pairs and Consumers, which the decisions use);
// an error says where the relaxation would change them.
func DeviceRelaxation(p *placement.Placement, d, memory int) (*placement.Placement, error) {
	switch {
	case d < 0 || d >= p.Devices:
		return nil, fmt.Errorf("search: device %d of placement %q: no such device", d, p.Name)
	case p.HasCandidates():
		return nil, fmt.Errorf("search: placement %q: blocks choose their devices: no device alone", p.Name)
	case p.Overlap != nil:
		// Overlapped pairs shorten a device's work: leaving them out
		// would not relax.
		return nil, fmt.Errorf("search: placement %q: forwards and backwards overlap: no device alone", p.Name)
	}
	order, ok := p.Topo()
	if !ok {
		return nil, fmt.Errorf("search: placement %q: dependencies have a cycle", p.Name)
	}
	kept := make([]bool, len(p.Blocks))
	q := &placement.Placement{Name: fmt.Sprintf("%s-device-%d", p.Name, d), Devices: 1}
	index := make([]int, len(p.Blocks)) // p's block → q's, -1 when removed
	groups := map[string]int{}          // a group's devices → its device in q
	for _, i := range order {
		index[i] = -1
		b := p.Blocks[i]
		if !slices.Contains(b.Devices, d) {
			continue
		}
		kept[i] = true
		nb := b
		nb.Candidates = nil
		nb.Devices = []int{0}
		if len(b.Devices) > 1 {
			key := fmt.Sprint(b.Devices)
			g, ok := groups[key]
			if !ok {
				g = q.Devices
				q.Devices++
				groups[key] = g
			}
			nb.Devices = []int{0, g}
		}
		index[i] = len(q.Blocks)
		q.Blocks = append(q.Blocks, nb)
	}
	if len(q.Blocks) == 0 {
		return nil, fmt.Errorf("search: device %d of placement %q runs no block", d, p.Name)
	}
	transfers := map[placement.Dep]int{}
	dep := func(from, to, lag int) {
		dp := placement.Dep{From: from, To: to}
		q.Deps = append(q.Deps, dp)
		if lag > 0 {
			transfers[dp] = lag
		}
	}
	standIn := func(id string) int {
		q.Blocks = append(q.Blocks, placement.Block{ID: id, Kind: placement.Forward, Devices: []int{q.Devices}, Time: 1})
		q.Devices++
		return len(q.Blocks) - 1
	}
	succs := p.SuccDeps()
	// Direct dependencies between kept blocks keep their delay (0 where
	// both run on d).
	for _, dp := range p.Deps {
		if kept[dp.From] && kept[dp.To] {
			dep(index[dp.From], index[dp.To], p.Transfer(dp))
		}
	}
	// Paths through removed blocks. far[x]: the longest path from the
	// start of the current first block to the start of x, through removed
	// blocks only (-1: none).
	far := make([]int, len(p.Blocks))
	longest := func(first int) {
		for i := range far {
			far[i] = -1
		}
		far[first] = 0
		for _, x := range order {
			if far[x] < 0 || (x != first && kept[x]) {
				continue
			}
			for _, dp := range succs[x] {
				if v := far[x] + p.Delay(dp); v > far[dp.To] {
					far[dp.To] = v
				}
			}
		}
	}
	// From every kept block, through removed blocks, to kept blocks and
	// to the end.
	for _, i := range order {
		if !kept[i] {
			continue
		}
		for _, dp := range succs[i] {
			a := dp.To
			if kept[a] {
				continue
			}
			// Paths whose first removed block is a.
			longest(a)
			tail := -1
			for _, x := range order {
				if far[x] < 0 || x == a {
					continue
				}
				if kept[x] {
					// i → a (delay), a's stand-in (1), then the rest.
					s := standIn(fmt.Sprintf("%s~%s", p.Blocks[a].ID, p.Blocks[x].ID))
					dep(index[i], s, p.Transfer(dp))
					dep(s, index[x], far[x]-1)
				}
			}
			for _, x := range order {
				if far[x] >= 0 && !kept[x] && len(succs[x]) == 0 {
					tail = max(tail, far[x]+p.Blocks[x].Time)
				}
			}
			if tail >= 0 {
				// The last unit of the path's last block ends at
				// least delay + tail after i's end.
				s := standIn(fmt.Sprintf("%s~end", p.Blocks[a].ID))
				dep(index[i], s, p.Transfer(dp)+tail-1)
			}
		}
	}
	// From every source that is removed, through removed blocks, to kept
	// blocks (heads).
	preds := p.Preds()
	for _, a := range order {
		if kept[a] || len(preds[a]) > 0 {
			continue
		}
		longest(a)
		for _, x := range order {
			if far[x] > 0 && kept[x] {
				s := standIn(fmt.Sprintf("%s~%s", p.Blocks[a].ID, p.Blocks[x].ID))
				dep(s, index[x], far[x]-1)
			}
		}
	}
	if len(transfers) > 0 {
		q.Transfers = transfers
	}
	q.Capacities = make([]int, q.Devices)
	q.Capacities[0] = p.Budget(d, memory)
	if q.Capacities[0] <= 0 {
		q.Capacities = nil
	}
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("search: device %d of placement %q alone: %w", d, p.Name, err)
	}
	// The decisions pair forwards with their gradients: the relaxation
	// must pair them as p does.
	pp, qp := p.Pairs(), q.Pairs()
	pc, qc := p.Consumers(), q.Consumers()
	for i := range p.Blocks {
		if !kept[i] {
			continue
		}
		same := func(a, b int) bool { return (a < 0 && b < 0) || (a >= 0 && kept[a] && index[a] == b) }
		if !same(pp[i], qp[index[i]]) || !same(pc[i], qc[index[i]]) {
			return nil, fmt.Errorf("search: device %d of placement %q alone: block %s would pair otherwise", d, p.Name, p.Blocks[i].ID)
		}
	}
	return q, nil
}
