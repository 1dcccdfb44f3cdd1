package baseline

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// OneFOneB is 1F1B (PipeDream-flush, Narayanan et al. 2021) on a v-shape
// pipeline: one chain of single-device forward stages, each on its own
// device, then their backwards in reverse order on the same devices. Stage
// s of S warms up with S−s forwards (micro-batches 0..S−s−1), then
// alternates one backward and one forward, then drains the backwards. Its
// peak memory is S−s on stage s. With a split backward, every weight
// block runs right after its input block (1F1B knows no split).
func OneFOneB(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "1f1b"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, err
	}
	q, err := wholePipeline(p)
	if err != nil {
		return nil, notApplicable(name, p, "not a v-shape pipeline: %v", err)
	}
	if v, ok := q.stagesPerDevice(); !ok || v != 1 {
		return nil, notApplicable(name, p, "a device holds several stages; see 1f1b-interleaved")
	}
	return finish(name, p, n, memory, oneFOneBOrders(p.Devices, q, n))
}

// oneFOneBOrders is the 1F1B order of every device for a pipeline with one
// stage per device.
func oneFOneBOrders(devices int, q pipeline, n int) [][]schedule.Ref {
	orders := make([][]schedule.Ref, devices)
	S := q.stages()
	for s := range S {
		f := func(m int) schedule.Ref { return schedule.Ref{Block: q.fwd[s], Micro: m} }
		var order []schedule.Ref
		if len(q.bwd) == 0 {
			for m := range n {
				order = append(order, f(m))
			}
		} else {
			b := func(m int) schedule.Ref { return schedule.Ref{Block: q.bwd[s], Micro: m} }
			w := min(S-s, n)
			for m := range w {
				order = append(order, f(m))
			}
			for m := range n {
				order = append(order, b(m))
				if q.split() {
					order = append(order, schedule.Ref{Block: q.wgt[s], Micro: m})
				}
				if w+m < n {
					order = append(order, f(w+m))
				}
			}
		}
		orders[q.dev[s]] = order
	}
	return orders
}

// Interleaved is 1F1B with virtual stages (Megatron-LM, Narayanan et al.
// 2021): the chain is v ≥ 2 chunks of L stages, each chunk visiting each
// of the same L devices once, so each device holds v stages. Micro-batches
// go in groups of L; within a group every chunk runs the whole group
// before the next chunk starts, forwards in chunk order and backwards in
// reverse chunk order. A device at position r of the last chunk warms up
// with (v−1)L + 2(L−r−1) forwards, or as many as the device after it in
// some chunk if that is more, then alternates one forward and one
// backward, then drains the backwards. On the loop placement (v-shape
// --chunks C --order loop: chunk c's stage r on device r) that is
// Megatron-LM's schedule; on the V placement (--order v), whose chunks
// run down the devices and back up, it is the same rule on its chunks,
// every device warming up with the largest count. As
// in Megatron-LM, N must be a multiple of L. With a split backward every
// weight block runs right after its input block.
func Interleaved(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "1f1b-interleaved"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, err
	}
	q, err := wholePipeline(p)
	if err != nil {
		return nil, notApplicable(name, p, "not a pipeline: %v", err)
	}
	at, ok := q.chunkStages()
	v := len(at)
	if !ok || v < 2 {
		return nil, notApplicable(name, p, "needs each device to hold several stages, each chunk of the chain on every device once")
	}
	L := q.stages() / v
	if n%L != 0 {
		// Megatron-LM asks the same: with a partial group the warmup counts
		// no longer match the chunk order and the orders can deadlock.
		return nil, notApplicable(name, p, "%d micro-batches are not whole groups of the %d devices of the cycle", n, L)
	}
	// The op sequences of chunk indices c and micro-batches.
	type op struct{ chunk, micro int }
	var fwd, bwd []op
	for g := 0; g < n; g += L {
		for c := range v {
			for k := range L {
				fwd = append(fwd, op{c, g + k})
				bwd = append(bwd, op{v - 1 - c, g + k})
			}
		}
	}
	// Device d's warmup: (v−1)L + 2(L−r−1) at position r of the last
	// chunk, raised until no device warms up with fewer forwards than the
	// next one in any chunk (a device never runs ahead of the one that
	// feeds it). On the loop placement the counts already fall along
	// every chunk; where chunks run both ways (V), all become the largest.
	warm := map[int]int{}
	for d, j := range at[v-1] {
		warm[d] = 2*(L-(j-(v-1)*L)-1) + (v-1)*L
	}
	for changed := true; changed; {
		changed = false
		for j := range q.stages() - 1 {
			if (j+1)%L == 0 {
				continue // the next stage begins another chunk
			}
			if a, b := q.dev[j], q.dev[j+1]; warm[a] < warm[b] {
				warm[a], changed = warm[b], true
			}
		}
	}
	orders := make([][]schedule.Ref, p.Devices)
	for d := range at[0] {
		f := func(o op) schedule.Ref { return schedule.Ref{Block: q.fwd[at[o.chunk][d]], Micro: o.micro} }
		b := func(o op) schedule.Ref { return schedule.Ref{Block: q.bwd[at[o.chunk][d]], Micro: o.micro} }
		var order []schedule.Ref
		if len(q.bwd) == 0 {
			for _, o := range fwd {
				order = append(order, f(o))
			}
		} else {
			w := min(warm[d], len(fwd))
			for _, o := range fwd[:w] {
				order = append(order, f(o))
			}
			for k := range len(fwd) - w {
				order = append(order, f(fwd[w+k]), b(bwd[k]))
			}
			for _, o := range bwd[len(fwd)-w:] {
				order = append(order, b(o))
			}
		}
		if q.split() {
			order = withWeights(p, order)
		}
		orders[d] = order
	}
	return finish(name, p, n, memory, orders)
}

// OneFOneBPlus is the paper's 1F1B+ (§VI-A): the placement is one chain
// whose blocks are either single-device pipeline stages or blocks on all
// devices (m-shape, nn-shape); the stages alone form a v-shape pipeline
// with one stage per device. Its 1F1B schedule is timed alone and its
// instances listed by start time; every block on all devices is then
// inserted where its neighbour sits in that timeline: at the end of its
// predecessor in the chain or, heading the chain, at the start of its
// successor, before every stage instance starting then or later. The
// per-device orders are that one list restricted to each device.
// Placements whose blocks do not form one chain (k-shape: two parallel
// branches) have no straightforward adaptation. With a split backward it is
// timed without the weight blocks, and each runs right after its input
// block.
func OneFOneBPlus(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "1f1b-plus"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, err
	}
	all := make([]int, p.K())
	for i := range all {
		all[i] = i
	}
	rest, wgt, err := weights(p, all)
	if err != nil {
		return nil, notApplicable(name, p, "%v", err)
	}
	chain, ok := chainOf(p, rest)
	if !ok {
		return nil, notApplicable(name, p, "the blocks do not form one chain (parallel branches); no straightforward adaptation of 1F1B")
	}
	var stages []int
	for _, i := range chain {
		if isShard(p, i) {
			continue
		}
		if len(p.Blocks[i].Devices) != 1 {
			return nil, notApplicable(name, p, "block %d spans %d of %d devices; 1F1B+ handles blocks on one device or on all", i, len(p.Blocks[i].Devices), p.Devices)
		}
		stages = append(stages, i)
	}
	if len(stages) == 0 {
		return nil, notApplicable(name, p, "no single-device stage to pipeline")
	}
	q, err := pipelineOf(p, stages, wgt)
	if err != nil {
		return nil, notApplicable(name, p, "the single-device blocks are not a v-shape pipeline: %v", err)
	}
	if v, ok := q.stagesPerDevice(); !ok || v != 1 {
		return nil, notApplicable(name, p, "a device holds several stages")
	}
	seq, starts, err := timed1F1B(p, q.unsplit(), n, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: placement %q: %w", name, p.Name, err)
	}
	// Every block on all devices gets a time in the 1F1B timeline: when
	// its predecessor in the chain lets it start (the placement's Delay),
	// or, heading the chain, the start of its successor. It goes into the
	// list before every stage instance that starts at that time or later.
	type item struct {
		ref  schedule.Ref
		time int
		rank int // 0: inserted block, placed first on ties; then list order
	}
	at := map[schedule.Ref]int{} // stage instance → start
	for k, r := range seq {
		at[r] = starts[k]
	}
	var items []item
	for k, r := range seq {
		items = append(items, item{r, starts[k], 1 + k})
	}
	for m := range n {
		prev := -1
		var lead []int
		for _, i := range chain {
			switch {
			case !isShard(p, i):
				for _, j := range lead {
					items = append(items, item{schedule.Ref{Block: j, Micro: m}, at[schedule.Ref{Block: i, Micro: m}], 0})
				}
				lead = nil
				prev = i
			case prev < 0:
				lead = append(lead, i)
			default:
				ready := at[schedule.Ref{Block: prev, Micro: m}] + p.Delay(placement.Dep{From: prev, To: i})
				items = append(items, item{schedule.Ref{Block: i, Micro: m}, ready, 0})
			}
		}
	}
	// Stable: inserted blocks of one time keep micro-batch and chain order.
	slices.SortStableFunc(items, func(a, b item) int {
		return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(a.rank, b.rank))
	})
	full := make([]schedule.Ref, len(items))
	for k, it := range items {
		full[k] = it.ref
	}
	return finish(name, p, n, memory, project(p, withWeights(p, full)))
}

// timed1F1B times q's 1F1B schedule of n micro-batches alone and lists its
// instances, with micro-batches shifted by base, and their start times, by
// start time (ties by device). The list respects the dependencies: every
// block starts after its predecessor in the chain ends.
func timed1F1B(p *placement.Placement, q pipeline, n, base int) ([]schedule.Ref, []int, error) {
	sub, blocks := subPlacement(p, q)
	subQ := pipeline{dev: q.dev}
	for k := range q.fwd {
		subQ.fwd = append(subQ.fwd, k)
	}
	for s := range q.bwd {
		subQ.bwd = append(subQ.bwd, len(blocks)-1-s)
	}
	cs, err := compact.Compact(spec.New(sub, n), compact.Keep{Orders: oneFOneBOrders(p.Devices, subQ, n)})
	if err != nil {
		return nil, nil, fmt.Errorf("timing the 1F1B pipeline: %w", err)
	}
	ins := cs.Instances
	slices.SortFunc(ins, func(a, b schedule.Instance) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start),
			cmp.Compare(sub.Blocks[a.Block].Devices[0], sub.Blocks[b.Block].Devices[0]),
			cmp.Compare(a.Micro, b.Micro))
	})
	seq := make([]schedule.Ref, len(ins))
	starts := make([]int, len(ins))
	for k, in := range ins {
		seq[k] = schedule.Ref{Block: blocks[in.Block], Micro: base + in.Micro}
		starts[k] = in.Start
	}
	return seq, starts, nil
}
