package compact

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/schedule"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// deviceList formats a device group: "device 2" or "devices [0, 1]".
func deviceList(devs []int) string {
	if len(devs) == 1 {
		return fmt.Sprintf("device %d", devs[0])
	}
	return "devices " + schedule.IntList(devs)
}

// Keep is what Compact keeps of a schedule to be.
type Keep struct {
	// Orders is every device's order of its instances (Orders
	// gives a schedule's). An instance on a device group appears in the
	// order of each member device, and nowhere else.
	Orders [][]schedule.Ref
	// Pairs are overlapped forwards and backwards (placement's Overlap):
	// the instances of a pair start together and occupy their devices
	// for the pair's time, so they are consecutive in each device's
	// order (the forward first, then the whole backward). A pair the
	// placement's rule does not allow, an instance in two pairs, or pairs
	// with channels are errors.
	Pairs []schedule.Pair
	// From, when set, is a schedule of the spec's placement whose orders
	// Compact keeps instead of Orders and Pairs: of its instances, of its
	// decisions (offload, reload, recompute) on every device and host
	// channel, and of its memory changes on every device. It must verify
	// without a latency budget, and the result is verified.
	From *schedule.Schedule
	// Release, when set, is the earliest start of some instances (a
	// rule's wait that is no dependency: FSDP's gathered parameters).
	// Not with From or a latency budget.
	Release map[schedule.Ref]int
}

// Compact is the one re-timing every builder uses — the baselines on
// their orders, the constructions, the search's assembled schedules, the
// refinement's windows, a schedule moved onto another cluster (OnCluster)
// — so that a rule of the timing model is applied the same way
// everywhere. It returns the schedule of the spec that keeps what keep
// says with every instance as early as the rules allow (since per-device
// orders alone fix memory, it never changes peak memory):
//
//   - the dependencies (placement's Delay): the longest path from time 0
//     over the DAG whose edges are consecutive instances of each device
//     order (weighted by the first one's time) and the dependencies of
//     each micro-batch, in O(V+E); with channels (placement's Channels) a
//     tensor also waits for the transfers queued before it on its links,
//     as the verifier times them;
//   - overlapped pairs (Keep.Pairs);
//   - under the spec's latency budget (placement's "Latency": the sink of
//     micro-batch n ends at most Latency after its source starts), an
//     edge from every sink back to every source of its micro-batch,
//     weighted t_sink − Latency: the starts are then the longest paths of
//     a graph with negative edges, found by relaxation; orders that admit
//     no schedule within the budget are an error. A micro-batch is
//     delayed only as much as its budget asks;
//   - with Keep.From, the decisions' timing rule (placement's
//     EarliestOffload, EarliestReload, LatestReload, EarliestRecompute,
//     LatestRecompute) and one move at a time on each host channel, as
//     difference constraints solved together with the rest. Placements
//     whose links carry one transfer at a time are not compacted with
//     decisions (an error).
//
// When the orders come from a valid schedule (Orders) the result
// is valid and ends no later. Inconsistent orders are an error naming
// the instances: an instance out of range, listed twice on a device,
// listed on a device it does not occupy, missing from a device it
// occupies, or a cycle (for example two devices ordering two group blocks
// differently). The instances come back in file order (Sort).
//
// Without Keep.From the result is the spec's schedule of those instances
// and pairs, not yet verified (callers verify it, under the budget they
// mean); with it, the result is From's spec under this spec's latency
// budget, verified.
func Compact(sp spec.Spec, keep Keep) (*schedule.Schedule, error) {
	if keep.Release != nil && (keep.From != nil || sp.Latency > 0) {
		return nil, errors.New("compact: release times with decisions or a latency budget")
	}
	if keep.From != nil {
		return decisionsLatency(keep.From, sp.Latency)
	}
	if sp.Latency > 0 {
		if len(keep.Pairs) > 0 {
			return nil, errors.New("compact: overlapped pairs under a latency budget")
		}
		ins, err := latencyOrders(sp.Placement, sp.MicroBatches, keep.Orders, sp.Latency)
		if err != nil {
			return nil, err
		}
		return &schedule.Schedule{Spec: sp, Instances: ins}, nil
	}
	var release []int
	if keep.Release != nil && sp.Placement != nil && sp.MicroBatches > 0 {
		release = make([]int, len(sp.Placement.Blocks)*sp.MicroBatches)
		for r, t := range keep.Release {
			if r.Block < 0 || r.Block >= len(sp.Placement.Blocks) || r.Micro < 0 || r.Micro >= sp.MicroBatches {
				return nil, fmt.Errorf("compact: release time of an instance out of range (block %d, micro-batch %d)", r.Block, r.Micro)
			}
			release[r.Block*sp.MicroBatches+r.Micro] = max(t, 0)
		}
	}
	ins, err := compact(sp.Placement, sp.MicroBatches, keep.Orders, keep.Pairs, release)
	if err != nil {
		return nil, err
	}
	return &schedule.Schedule{Spec: sp, Instances: ins, Pairs: keep.Pairs}, nil
}

// compact is the re-timing of orders (see Compact); release (nil: none),
// indexed by node (block·n + micro-batch), is the earliest start of each
// instance.
func compact(p *placement.Placement, n int, orders [][]schedule.Ref, pairs []schedule.Pair, release []int) ([]schedule.Instance, error) {
	if p == nil {
		return nil, fmt.Errorf("compact: no placement")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	if n < 0 || n > schedule.MaxMicroBatches {
		return nil, fmt.Errorf("compact: micro-batch count %d out of range 0..%d", n, schedule.MaxMicroBatches)
	}
	if len(orders) != p.Devices {
		return nil, fmt.Errorf("compact: %d device orders for %d devices", len(orders), p.Devices)
	}
	k := len(p.Blocks)
	nodes := k * n
	node := func(r schedule.Ref) int { return r.Block*n + r.Micro }
	ref := func(v int) schedule.Ref { return schedule.Ref{Block: v / n, Micro: v % n} }
	name := func(r schedule.Ref) string { return p.Blocks[r.Block].ID + fmt.Sprintf("^%d", r.Micro) }

	// rep is the node that stands for a node's pair (itself when
	// unpaired); dur is how long a node occupies its devices.
	rep := make([]int, nodes)
	for v := range rep {
		rep[v] = v
	}
	dur := func(v int) int { return p.Blocks[ref(v).Block].Time }
	if len(pairs) > 0 {
		if p.Channels {
			return nil, fmt.Errorf("compact: overlapped pairs on a cluster with channels: not supported")
		}
		roles := p.Roles()
		pairTime := map[int]int{}
		for _, q := range pairs {
			refs, t, why := schedule.PairGroup(p, roles, q)
			if why == "" && q.Forward.Micro == q.Backward.Micro {
				why = "one micro-batch"
			}
			if why != "" {
				return nil, fmt.Errorf("compact: pair %s+%s: %s", name(q.Forward), name(q.Backward), why)
			}
			for _, r := range refs {
				if r.Micro < 0 || r.Micro >= n {
					return nil, fmt.Errorf("compact: pair %s+%s: micro-batch out of range", name(q.Forward), name(q.Backward))
				}
				if _, dup := pairTime[node(r)]; dup {
					return nil, fmt.Errorf("compact: %s is in two pairs", name(r))
				}
				pairTime[node(r)] = t
				rep[node(r)] = node(q.Forward)
			}
		}
		dur = func(v int) int {
			if t, ok := pairTime[v]; ok {
				return t
			}
			return p.Blocks[ref(v).Block].Time
		}
	}

	// Device-order edges, checked as they are read.
	count := make([]int, nodes)
	stamp := make([]int, nodes)  // d+1 when seen on device d
	var from, to, via, lag []int // edges; via is the device, -1 for a dependency; lag is start-to-start
	for d, order := range orders {
		prev := -1
		for pos, r := range order {
			if r.Block < 0 || r.Block >= k || r.Micro < 0 || r.Micro >= n {
				return nil, fmt.Errorf("compact: device %d, position %d: instance block %d micro-batch %d out of range (%d blocks, %d micro-batches)",
					d, pos, r.Block, r.Micro, k, n)
			}
			if !p.OnDevice(r.Block, d) {
				return nil, fmt.Errorf("compact: device %d, position %d: %s is listed but runs on %s", d, pos, name(r), deviceList(p.Blocks[r.Block].Devices))
			}
			v := node(r)
			if stamp[v] == d+1 {
				return nil, fmt.Errorf("compact: device %d: %s listed twice", d, name(r))
			}
			stamp[v] = d + 1
			count[v]++
			if prev >= 0 && rep[prev] != rep[v] {
				from, to, via = append(from, rep[prev]), append(to, rep[v]), append(via, d)
				lag = append(lag, dur(prev))
			}
			prev = v
		}
	}
	for v := range nodes {
		r := ref(v)
		if devs := p.Blocks[r.Block].Devices; count[v] != len(devs) {
			return nil, fmt.Errorf("compact: %s missing from the order of device %d", name(r), missingDevice(orders, devs, r))
		}
	}
	for _, dep := range p.Deps {
		delay := p.Delay(dep)
		for m := range n {
			u, w := node(schedule.Ref{Block: dep.From, Micro: m}), node(schedule.Ref{Block: dep.To, Micro: m})
			if rep[u] == rep[w] && u != w {
				continue // one overlapped action
			}
			from, to, via = append(from, rep[u]), append(to, rep[w]), append(via, -1)
			lag = append(lag, delay-p.Blocks[dep.From].Time+dur(u))
		}
	}

	// Successor lists in CSR form, then Kahn's algorithm.
	first := make([]int, nodes+1)
	for _, w := range from {
		first[w+1]++
	}
	for v := range nodes {
		first[v+1] += first[v]
	}
	succ := make([]int, len(from))
	succLag := make([]int, len(from))
	fill := slices.Clone(first[:nodes])
	indeg := make([]int, nodes)
	for e, u := range from {
		succ[fill[u]] = to[e]
		succLag[fill[u]] = lag[e]
		fill[u]++
		indeg[to[e]]++
	}
	// With channels, a tensor also waits for its links. The producers of
	// a link all run on the link's first device, and Kahn's algorithm
	// takes them in that device's order, which is their start order: the
	// order in which the link queue books them (placement's LinkQueue).
	var links *placement.LinkQueue
	var succDeps [][]placement.Dep
	if p.Channels {
		links, succDeps = p.NewLinkQueue(), p.SuccDeps()
	}
	start := make([]int, nodes)
	if release != nil {
		copy(start, release)
	}
	queue := make([]int, 0, nodes)
	for v := range nodes {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		if links != nil {
			r := ref(u)
			for _, d := range succDeps[r.Block] {
				w := node(schedule.Ref{Block: d.To, Micro: r.Micro})
				at, _, _ := links.Arrival(d, start[u])
				start[w] = max(start[w], at)
			}
		}
		for e := first[u]; e < first[u+1]; e++ {
			w := succ[e]
			start[w] = max(start[w], start[u]+succLag[e])
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	if len(queue) < nodes {
		return nil, fmt.Errorf("compact: the orders contradict each other or the dependencies: %s", cycleText(indeg, from, to, via, func(v int) string { return name(ref(v)) }))
	}

	out := make([]schedule.Instance, nodes)
	for v := range nodes {
		r := ref(v)
		out[v] = schedule.Instance{Block: r.Block, Micro: r.Micro, Start: start[rep[v]]}
	}
	schedule.SortInstances(p, out)
	return out, nil
}

// missingDevice returns the first device of devs whose order lacks r.
func missingDevice(orders [][]schedule.Ref, devs []int, r schedule.Ref) int {
	for _, d := range devs {
		if !slices.Contains(orders[d], r) {
			return d
		}
	}
	return devs[0]
}

// cycleText describes one cycle among the nodes Kahn's algorithm left
// (indeg > 0), e.g. "G^0 -(device 0)-> G^1 -(device 1)-> G^0". Every such
// node has a predecessor among them, so walking predecessors must repeat.
func cycleText(indeg, from, to, via []int, name func(int) string) string {
	pred := make(map[int]int) // node -> edge index of one left-over predecessor
	for e := range from {
		if indeg[from[e]] > 0 && indeg[to[e]] > 0 {
			if _, ok := pred[to[e]]; !ok {
				pred[to[e]] = e
			}
		}
	}
	v := -1
	for u := range indeg {
		if indeg[u] > 0 {
			v = u
			break
		}
	}
	seen := make(map[int]bool)
	for !seen[v] {
		seen[v] = true
		v = from[pred[v]]
	}
	// v is on the cycle; collect it backwards, then print it forwards.
	var edges []int
	for u := v; ; {
		e := pred[u]
		edges = append(edges, e)
		u = from[e]
		if u == v {
			break
		}
	}
	slices.Reverse(edges)
	var b strings.Builder
	b.WriteString(name(from[edges[0]]))
	for _, e := range edges {
		if via[e] < 0 {
			b.WriteString(" -(dependency)-> ")
		} else {
			fmt.Fprintf(&b, " -(device %d)-> ", via[e])
		}
		b.WriteString(name(to[e]))
	}
	return "cycle " + b.String()
}
