package timeline

import (
	"fmt"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// builtinVariants are the options of the built-in shapes that Repartition
// recognises a placement by (the defaults of tessel search, and the
// zero-bubble family's): a placement equal to one of them on its devices
// is rebuilt with the same options on the new devices.
var builtinVariants = []placement.Options{
	{},
	{SplitBackward: true},
	{Chunks: 2, Order: placement.Loop},
	{Chunks: 2, Order: placement.V},
	{Chunks: 2, Order: placement.V, SplitBackward: true},
	{Chunks: 2, Order: placement.Loop, SplitBackward: true},
}

// Repartition is the placement given (as given: before any cluster) after
// its devices changed: was[e] is the device of given that device e now
// is, −1 for one that joined; c is the cluster before the change (its
// speeds weigh the loads). It also says in a few words what it did.
//
// A built-in shape (one of builtinVariants) becomes the same shape on
// the new number of devices. Any other placement keeps its stage
// boundaries — every block stays whole — and a device that leaves hands
// its blocks to a device they exchange tensors with: the one whose load
// (its blocks' times over its speed) is then least, the lower-numbered
// on ties; a block on a group of devices just loses the member that
// left. A device that joins such a placement is an error: splitting a
// stage needs the model's layers (run tessel partition again).
func Repartition(given *placement.Placement, c *cluster.Cluster, was []int) (*placement.Placement, string, error) {
	if name, opt, ok := builtinOf(given); ok {
		opt.Devices = len(was)
		q, err := placement.Builtin(name, opt)
		if err != nil {
			return nil, "", fmt.Errorf("%s on %d devices: %w", name, len(was), err)
		}
		return q, fmt.Sprintf("%s on %d devices", name, len(was)), nil
	}
	if slices.Contains(was, -1) {
		return nil, "", fmt.Errorf("placement %q is not a built-in shape: a device that joins needs its stages cut again from the model (tessel partition)", given.Name)
	}
	q := given.Clone()
	load := make([]float64, given.Devices)
	for _, b := range q.Blocks {
		for _, d := range b.Devices {
			load[d] += float64(b.Time) / c.Devices[d].Speed
		}
	}
	var moved []string
	for d := range given.Devices {
		if slices.Contains(was, d) {
			continue
		}
		onto := neighbour(q, d, was, load, c)
		if onto < 0 {
			return nil, "", fmt.Errorf("placement %q: device %d leaves and no device is left to take its blocks", given.Name, d)
		}
		for i := range q.Blocks {
			b := &q.Blocks[i]
			if !slices.Contains(b.Devices, d) {
				continue
			}
			if len(b.Devices) == 1 {
				b.Devices = []int{onto}
				load[onto] += float64(b.Time) / c.Devices[onto].Speed
			} else {
				b.Devices = slices.DeleteFunc(slices.Clone(b.Devices), func(x int) bool { return x == d })
			}
		}
		load[d] = 0
		moved = append(moved, fmt.Sprintf("device %d's blocks to device %d", d, onto))
	}
	now := make([]int, given.Devices)
	for d := range now {
		now[d] = slices.Index(was, d)
	}
	for i := range q.Blocks {
		b := &q.Blocks[i]
		for k, d := range b.Devices {
			b.Devices[k] = now[d]
		}
		slices.Sort(b.Devices)
		b.Devices = slices.Compact(b.Devices)
	}
	q.Devices = len(was)
	q.Capacities, q.HostChannels = nil, nil
	for dep := range q.Transfers {
		if shares(q.Blocks[dep.From].Devices, q.Blocks[dep.To].Devices) {
			delete(q.Transfers, dep)
		}
	}
	if err := q.Validate(); err != nil {
		return nil, "", err
	}
	desc := "stages kept"
	for k, m := range moved {
		if k == 0 {
			desc += ", "
		} else {
			desc += "; "
		}
		desc += m
	}
	return q, desc, nil
}

// neighbour is the device still there that takes the blocks of device d:
// among those its blocks exchange tensors with (any device still there
// where none does), the one of least load once it has them.
func neighbour(p *placement.Placement, d int, was []int, load []float64, c *cluster.Cluster) int {
	near := map[int]bool{}
	for _, dep := range p.Deps {
		a, b := p.Blocks[dep.From].Devices, p.Blocks[dep.To].Devices
		if slices.Contains(a, d) {
			for _, x := range b {
				near[x] = true
			}
		}
		if slices.Contains(b, d) {
			for _, x := range a {
				near[x] = true
			}
		}
	}
	best, bestLoad := -1, 0.0
	for _, pass := range []bool{true, false} {
		for e := range p.Devices {
			if e == d || !slices.Contains(was, e) || pass && !near[e] {
				continue
			}
			l := load[e] + load[d]*c.Devices[d].Speed/c.Devices[e].Speed
			if best < 0 || l < bestLoad {
				best, bestLoad = e, l
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}

func shares(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// builtinOf reports the built-in shape and options that build p, if any.
func builtinOf(p *placement.Placement) (string, placement.Options, bool) {
	for _, name := range placement.BuiltinNames() {
		for _, opt := range builtinVariants {
			opt.Devices = p.Devices
			q, err := placement.Builtin(name, opt)
			if err == nil && q.Name == p.Name && q.Equal(p) {
				return name, opt, true
			}
		}
	}
	return "", placement.Options{}, false
}

// MovedOrders is a warm start for q, the placement Repartition made by
// moving blocks (their indices unchanged): every device of q runs the
// instances of old (on the old devices) that now occupy it, in the order
// of their old starts (then block, then micro-batch: one order for all
// devices, so group blocks never cross), each as early as the order and
// q's times allow (schedule.Compact). nil when the result breaks a budget
// or q's blocks are not old's.
func MovedOrders(old *schedule.Schedule, q *placement.Placement, memory int) *schedule.Schedule {
	if len(q.Blocks) != len(old.Placement.Blocks) {
		return nil
	}
	for i, b := range q.Blocks {
		if b.ID != old.Placement.Blocks[i].ID {
			return nil
		}
	}
	ins := slices.Clone(old.Instances)
	sort.SliceStable(ins, func(i, j int) bool {
		a, b := ins[i], ins[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Block != b.Block {
			return a.Block < b.Block
		}
		return a.Micro < b.Micro
	})
	orders := make([][]schedule.Ref, q.Devices)
	for _, in := range ins {
		for _, d := range q.Blocks[in.Block].Devices {
			orders[d] = append(orders[d], in.Ref())
		}
	}
	out, err := schedule.Compact(q, old.MicroBatches, orders)
	if err != nil {
		return nil
	}
	s := &schedule.Schedule{Placement: q, MicroBatches: old.MicroBatches, Memory: memory, Instances: out}
	if schedule.Verify(s) != nil {
		return nil
	}
	return s
}
