package timeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
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

// Repartition is the placement first (the timeline's first, as given:
// before any cluster) cut again for the m devices of cluster c, whose
// speeds weigh the loads. It also says in a few words what it did.
//
// A built-in shape (one of builtinVariants) becomes the same shape on m
// devices. Any other placement is cut at its stage boundaries — a stage
// here being the blocks that run on one device of first alone, which
// stay together and whole: in device order, the n stages are split into
// m contiguous runs, the k-th run going to device k, so that the largest
// time on a device (its blocks' times on it, at its speed) is least (a
// dynamic program over the stages: the pipeline's order kept, only
// boundaries moved; the first least split on ties). A block on a group
// of devices runs on the devices its members' stages went to. Starting
// from first at every step, a device that leaves and later comes back
// gets a stage of its own again. More devices than first has stages is
// an error: splitting a stage needs the model's layers (run tessel
// partition again).
func Repartition(first *placement.Placement, c *cluster.Cluster, m int) (*placement.Placement, string, error) {
	given := first
	if name, opt, ok := builtinOf(given); ok {
		opt.Devices = m
		q, err := placement.Builtin(name, opt)
		if err != nil {
			return nil, "", fmt.Errorf("%s on %d devices: %w", name, m, err)
		}
		return q, fmt.Sprintf("%s on %d devices", name, m), nil
	}
	if m > given.Devices {
		return nil, "", fmt.Errorf("placement %q is not a built-in shape and has %d stages, fewer than the %d devices: splitting a stage needs the model's layers (tessel partition)", given.Name, given.Devices, m)
	}
	n := given.Devices
	// unit[d]: the blocks on device d alone.
	unit := make([][]int, n)
	for i, b := range given.Blocks {
		if len(b.Devices) == 1 {
			unit[b.Devices[0]] = append(unit[b.Devices[0]], i)
		}
	}
	// cost(a, b, e): the time of units a..b-1 on device e now.
	cost := func(a, b, e int) int {
		t := 0
		for d := a; d < b; d++ {
			for _, i := range unit[d] {
				t += c.BlockTime(given.Blocks[i].Time, []int{e})
			}
		}
		return t
	}
	// best[k][j]: the least largest time of units 0..j-1 on devices
	// 0..k-1, each device at least one unit; cut[k][j] where device
	// k-1's run begins.
	const inf = int(^uint(0) >> 1)
	best := make([][]int, m+1)
	cut := make([][]int, m+1)
	for k := range best {
		best[k], cut[k] = make([]int, n+1), make([]int, n+1)
		for j := range best[k] {
			best[k][j] = inf
		}
	}
	best[0][0] = 0
	for k := 1; k <= m; k++ {
		for j := k; j <= n-(m-k); j++ {
			for a := k - 1; a < j; a++ {
				if best[k-1][a] == inf {
					continue
				}
				if v := max(best[k-1][a], cost(a, j, k-1)); v < best[k][j] {
					best[k][j], cut[k][j] = v, a
				}
			}
		}
	}
	to := make([]int, n) // the new device of each old device's unit
	runs := make([]string, m)
	for k, j := m, n; k > 0; k-- {
		a := cut[k][j]
		for d := a; d < j; d++ {
			to[d] = k - 1
		}
		if j-a == 1 {
			runs[k-1] = fmt.Sprint(a)
		} else {
			runs[k-1] = fmt.Sprintf("%d-%d", a, j-1)
		}
		j = a
	}
	q := given.Clone()
	for i := range q.Blocks {
		b := &q.Blocks[i]
		if len(b.Devices) == 1 {
			b.Devices = []int{to[b.Devices[0]]}
			continue
		}
		var ds []int
		for _, d := range b.Devices {
			ds = append(ds, to[d])
		}
		slices.Sort(ds)
		b.Devices = slices.Compact(ds)
	}
	q.Devices = m
	q.Capacities, q.Switches = nil, nil
	for dep := range q.Transfers {
		if shares(q.Blocks[dep.From].Devices, q.Blocks[dep.To].Devices) {
			delete(q.Transfers, dep)
		}
	}
	if err := q.Validate(); err != nil {
		return nil, "", err
	}
	return q, "stages " + strings.Join(runs, ", ") + " on devices 0.." + fmt.Sprint(m-1), nil
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
// q's times allow (compact.Compact); where that breaks a budget, a list
// schedule in the same order that starts an instance only where it fits
// (construct.List with those priorities). nil when neither fits or q's
// blocks are not old's.
func MovedOrders(old *schedule.Schedule, q *placement.Placement, memory int) *schedule.Schedule {
	if len(q.Blocks) != len(old.Placement.Blocks) {
		return nil
	}
	for i, b := range q.Blocks {
		if b.ID != old.Placement.Blocks[i].ID {
			return nil
		}
	}
	ins := schedule.StartOrder(old)
	orders := make([][]schedule.Ref, q.Devices)
	for _, in := range ins {
		for _, d := range q.Blocks[in.Block].Devices {
			orders[d] = append(orders[d], in.Ref())
		}
	}
	cs, err := compact.Compact(spec.New(q, old.MicroBatches), compact.Keep{Orders: orders})
	if err != nil {
		return nil
	}
	out := cs.Instances
	s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: old.MicroBatches, Memory: memory}, Instances: out}
	if verify.Schedule(s) == nil {
		return s
	}
	// The devices that took others' blocks hold more activations than
	// their budgets allow: a list schedule that starts instances in the
	// same order of old starts, each only where it fits the budget.
	prio := make([]int, old.MicroBatches*len(q.Blocks))
	for rank, in := range ins {
		if x := in.Micro*len(q.Blocks) + in.Block; x < len(prio) {
			prio[x] = rank
		}
	}
	ls, err := construct.List(q, old.MicroBatches, construct.ListOptions{Memory: memory, Priority: prio})
	if err != nil || verify.Schedule(ls) != nil {
		return nil
	}
	return ls
}
