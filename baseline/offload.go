package baseline

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// The baselines that trade time for memory — PipeOffload, AdaOffload and
// 1F1B with full recompute — schedule a pipeline (one chain of stages,
// any number of stages per device, whole or split backward) by list
// scheduling in time, because what they decide (when an offload ends,
// when a reload may start, when a recomputed forward runs again) depends
// on the memory and the host channels at each moment, not on a fixed
// order alone. At every time step, in this order (the verifier's memory
// phases):
//
//  1. offloads that end, and recomputed forwards that end, free their
//     activation (all but the checkpoint);
//  2. every idle device starts the first ready instance of its stages in
//     priority order: a weight block right after its input block (the
//     backward "combined", as OptPipe describes PipeOffload), then the
//     second run of a recomputed forward whose consumer has its other
//     inputs, then an input or whole backward block, then a forward — the
//     lowest micro-batch first, then the later stage. A stage runs its
//     forwards in micro-batch order and keeps at most its fill count of
//     micro-batches between a forward and its backward (1F1B keeps S−s on
//     stage s); a forward waits while its memory does not fit or while a
//     reload on its device waits for memory;
//  3. every idle host channel starts a reload (of the earliest consumer
//     whose other inputs' producers have started: a prefetch that
//     overlaps them; only where the activation fits back) or else an
//     offload, the oldest first.
//
// The result is verified under the budget; where the policy gets stuck
// (nothing can start, something is left) the baseline does not fit the
// budget.

// memoryPolicy is what a time-for-memory baseline decides.
type memoryPolicy struct {
	name string
	// action is what happens to the activation of each forward block
	// (by stage), the same for every micro-batch.
	action []placement.Action
	// fill is each stage's largest number of micro-batches between its
	// forward and its backward.
	fill []int
}

// PipeOffload is the offload baseline of Wan et al., "PipeOffload:
// Improving Scalability of Pipeline Parallelism with Memory Optimization"
// (2025), as OptPipe (Qi et al.) uses it: every forward's activation is
// offloaded to host memory and reloaded just before its backward, the
// backward's input and weight blocks run together, and stage s of S
// starts its first backward after S−s forwards (1F1B's fill): the least
// memory of any of these schedules, at the cost of the host channel. A
// forward whose backward follows it at once on its device (the last
// stage) keeps its activation: offloading it would free nothing. It needs
// a pipeline whose forward blocks may be offloaded (--offload-time, or a
// placement file's "offload").
func PipeOffload(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "pipeoffload"
	q, err := memoryPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	pol, err := offloadPolicy(name, p, q)
	if err != nil {
		return nil, err
	}
	return runMemoryPolicy(p, q, n, memory, pol)
}

// AdaOffload is OptPipe's initial schedule (Qi et al., "OptPipe: Memory-
// and Scheduling-Optimized Pipeline Parallelism for LLM Training",
// Appendix D): PipeOffload's rules with a denser fill phase — each stage
// runs as many forwards before its first backward as the budget and the
// host channel allow. The fill grows by one micro-batch on every stage at
// a time, from PipeOffload's, while the makespan shortens and the
// schedule fits; the shortest is kept (PipeOffload's when nothing more
// fits).
func AdaOffload(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "adaoffload"
	q, err := memoryPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	pol, err := offloadPolicy(name, p, q)
	if err != nil {
		return nil, err
	}
	// The fills are compared unverified; the one kept is verified (a
	// check of every fill tried cost more than the fills).
	best, firstErr := simulateMemoryPolicy(p, q, n, memory, pol)
	if firstErr != nil && best == nil {
		return nil, firstErr
	}
	worse := 0
	prev := pol.fill
	for extra := 1; extra <= n && worse < 2; extra++ {
		more := pol
		more.fill = make([]int, len(pol.fill))
		for s, f := range pol.fill {
			more.fill[s] = min(n, f+extra)
		}
		if slices.Equal(more.fill, prev) {
			break
		}
		prev = more.fill
		s, err := simulateMemoryPolicy(p, q, n, memory, more)
		switch {
		case err != nil:
			worse++
		case best == nil || schedule.Makespan(s) < schedule.Makespan(best):
			best, firstErr, worse = s, nil, 0
		default:
			worse++
		}
	}
	if best == nil {
		return nil, firstErr
	}
	return verifiedPolicy(best, pol)
}

// OneFOneBRecompute is 1F1B with full activation recomputation (Megatron-
// LM's activation checkpointing; Chen et al., "Training Deep Nets with
// Sublinear Memory Cost"): 1F1B's fill, every forward keeps only its
// checkpoint and runs again just before its backward. It needs a pipeline
// whose forward blocks may be recomputed (--recompute, or a placement
// file's "recompute").
func OneFOneBRecompute(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "1f1b-recompute"
	q, err := memoryPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	consumers := p.Consumers()
	pol := memoryPolicy{name: name}
	for s, f := range q.fwd {
		if !p.Recomputable(f, consumers) {
			return nil, notApplicable(name, p, "forward block %s cannot be recomputed (give the placement --recompute)", p.Blocks[f].ID)
		}
		pol.action = append(pol.action, placement.Recompute)
		pol.fill = append(pol.fill, q.stages()-s)
	}
	return runMemoryPolicy(p, q, n, memory, pol)
}

// Savings schedules a pipeline with 1F1B's fill and each stage's forward
// activation kept, offloaded or recomputed as actions says (one per
// stage, in pipeline order), by the list scheduling of PipeOffload: a
// building block for mixed schedules (tests, the runtime's end-to-end
// run), not a method of its own.
func Savings(sp spec.Spec, actions []placement.Action) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "savings"
	q, err := memoryPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	if len(actions) != q.stages() {
		return nil, fmt.Errorf("%s: %d actions for %d stages", name, len(actions), q.stages())
	}
	consumers := p.Consumers()
	pol := memoryPolicy{name: name, action: slices.Clone(actions)}
	for s, f := range q.fwd {
		if !p.Allows(f, actions[s], consumers) {
			return nil, fmt.Errorf("%s: forward block %s does not allow %s", name, p.Blocks[f].ID, actions[s])
		}
		pol.fill = append(pol.fill, q.stages()-s)
	}
	return runMemoryPolicy(p, q, n, memory, pol)
}

// memoryPipeline reads p as a pipeline for the time-for-memory baselines.
func memoryPipeline(name string, p *placement.Placement, n, memory int) (pipeline, error) {
	if err := checkArgs(name, p, n, memory); err != nil {
		return pipeline{}, err
	}
	q, err := wholePipeline(p)
	if err != nil {
		return pipeline{}, notApplicable(name, p, "not a pipeline: %v", err)
	}
	if len(q.bwd) == 0 {
		return pipeline{}, notApplicable(name, p, "no backward: nothing to offload or recompute")
	}
	if p.Channels {
		return pipeline{}, notApplicable(name, p, "transfers that queue on links (channels) are not modelled here")
	}
	return q, nil
}

// offloadPolicy offloads every forward but those whose backward directly
// follows them on their device, with 1F1B's fill.
func offloadPolicy(name string, p *placement.Placement, q pipeline) (memoryPolicy, error) {
	consumers := p.Consumers()
	pol := memoryPolicy{name: name}
	any := false
	for s, f := range q.fwd {
		a := placement.Keep
		if !(s == q.stages()-1 && q.dev[s] == p.Blocks[q.bwd[s]].Devices[0]) {
			if !p.Offloadable(f, consumers) {
				return pol, notApplicable(name, p, "forward block %s cannot be offloaded (give the placement --offload-time)", p.Blocks[f].ID)
			}
			a, any = placement.Offload, true
		}
		pol.action = append(pol.action, a)
		pol.fill = append(pol.fill, q.stages()-s)
	}
	if !any {
		return pol, notApplicable(name, p, "a single stage: nothing to offload")
	}
	return pol, nil
}

// memInst is the state of one instance in runMemoryPolicy.
type memInst struct {
	started    bool
	start, end int
}

// memSave is the state of one forward instance's decision.
type memSave struct {
	action           placement.Action
	offStart, offEnd int // -1 until started
	relStart, relEnd int
	rerun, rerunEnd  int
}

// simulateMemoryPolicy list-schedules the pipeline q under pol, time
// step by time step; the schedule is not verified yet.
func simulateMemoryPolicy(p *placement.Placement, q pipeline, n, memory int, pol memoryPolicy) (*schedule.Schedule, error) {
	S := q.stages()
	preds := p.PredDeps()
	budget := p.Budgets(memory)
	// stageOf maps a pipeline block to its stage and role.
	type role struct{ stage, kind int } // kind 0 forward, 1 input/backward, 2 weight
	roles := map[int]role{}
	for s := range S {
		roles[q.fwd[s]] = role{s, 0}
		roles[q.bwd[s]] = role{s, 1}
		if q.split() {
			roles[q.wgt[s]] = role{s, 2}
		}
	}
	if len(roles) != p.K() {
		return nil, notApplicable(pol.name, p, "blocks outside the pipeline")
	}
	ins := make([][]memInst, p.K())
	for i := range ins {
		ins[i] = make([]memInst, n)
	}
	saves := make([][]memSave, S)
	for s := range S {
		saves[s] = make([]memSave, n)
		for m := range n {
			saves[s][m] = memSave{action: pol.action[s], offStart: -1, offEnd: -1, relStart: -1, relEnd: -1, rerun: -1, rerunEnd: -1}
		}
	}
	mem := make([]int, p.Devices)
	busy := make([]int, p.Devices) // when each device is next free
	chanFree := map[int]int{}
	nextF := make([]int, S)    // next micro-batch each stage forwards
	consumed := make([]int, S) // backwards started per stage
	// Cursors keep each time step's scans to the micro-batches in flight
	// (a whole-N scan per step made the policy quadratic in N): every
	// micro-batch below a cursor can no longer match its scan.
	offFree := make([]int, S) // offloads that ended before t
	recFree := make([]int, S) // recomputed forwards that ended before t
	offNext := make([]int, S) // offloads started
	wgtNext := make([]int, S) // weight blocks started
	left := n * p.K()
	total := 0
	for _, b := range p.Blocks {
		total += b.Time
	}
	for s := range S {
		total += 2 * p.OffloadTime(q.fwd[s])
	}
	limit := n*total + 1
	ready := func(i, m, t int) bool {
		for _, d := range preds[i] {
			x := ins[d.From][m]
			if !x.started || x.start+p.Delay(d) > t {
				return false
			}
		}
		return true
	}
	// othersStarted: every input of consumer c of micro-batch m other
	// than its own forward has started (the trigger of a reload).
	othersStarted := func(c, f, m, t int) bool {
		for _, d := range preds[c] {
			if d.From != f && (!ins[d.From][m].started || ins[d.From][m].start > t) {
				return false
			}
		}
		return true
	}
	fmem := func(s int) int { return p.Blocks[q.fwd[s]].Memory }
	// A step that changes nothing is followed by the next time at which
	// a condition below can change — a device or host channel gets free,
	// an instance, move or rerun ends, a tensor arrives (every such time
	// is queued as it is set) — rather than by t+1: the same schedule,
	// without a pass per time unit (placements in real units have fine
	// steps).
	succs := p.SuccDeps()
	changed := false
	var events intHeap
	at := func(x int) { heap.Push(&events, x) }
	step := func(t int) int {
		if changed {
			changed = false
			return t + 1
		}
		for events.Len() > 0 && events[0] <= t {
			heap.Pop(&events)
		}
		if events.Len() == 0 {
			return limit + 1
		}
		return events[0]
	}
	for s := range S {
		// A forward needs its whole activation while it runs.
		if b := budget[q.dev[s]]; b > 0 && fmem(s) > b {
			return nil, fmt.Errorf("%s: placement %q: forward %s takes %d, over the budget %d of device %d: %w",
				pol.name, p.Name, p.Blocks[q.fwd[s]].ID, fmem(s), b, q.dev[s], ErrNoSchedule)
		}
	}
	for t := 0; left > 0; t = step(t) {
		if t > limit {
			return nil, fmt.Errorf("%s: placement %q: stuck at time %d with %d instances left: the policy does not fit the budget %s: %w",
				pol.name, p.Name, t, left, BudgetText(p, memory), ErrNoSchedule)
		}
		// 1. Frees.
		for s := range S {
			d := q.dev[s]
			switch pol.action[s] {
			case placement.Offload:
				// Offloads start only on forwards that ran (m < nextF).
				for offFree[s] < nextF[s] && saves[s][offFree[s]].offStart >= 0 && saves[s][offFree[s]].offEnd < t {
					offFree[s]++
				}
				for m := offFree[s]; m < nextF[s]; m++ {
					if saves[s][m].offEnd == t {
						mem[d] -= fmem(s)
						changed = true
					}
				}
			case placement.Recompute:
				f := ins[q.fwd[s]]
				for recFree[s] < nextF[s] && f[recFree[s]].end < t {
					recFree[s]++
				}
				for m := recFree[s]; m < nextF[s]; m++ {
					if f[m].end == t {
						mem[d] -= p.Freed(q.fwd[s], placement.Recompute)
						changed = true
					}
				}
			}
		}
		// Devices with a reload that waits for memory start no forward.
		reserve := make([]bool, p.Devices)
		for s := range S {
			m := consumed[s]
			if m < n && saves[s][m].action == placement.Offload && saves[s][m].offEnd >= 0 && saves[s][m].offEnd <= t && saves[s][m].relStart < 0 &&
				othersStarted(q.bwd[s], q.fwd[s], m, t) {
				reserve[q.dev[s]] = true
			}
		}
		// 2. Block starts.
		for d := range p.Devices {
			if busy[d] > t {
				continue
			}
			type cand struct {
				block, micro, stage, prio int
				rerun                     bool
			}
			var best *cand
			consider := func(c cand) {
				if best == nil || c.prio < best.prio || c.prio == best.prio && (c.micro < best.micro || c.micro == best.micro && c.stage > best.stage) {
					best = &c
				}
			}
			for s := range S {
				if q.dev[s] != d {
					continue
				}
				// Weight blocks right after their input blocks.
				if q.split() {
					w := q.wgt[s]
					for wgtNext[s] < n && ins[w][wgtNext[s]].started {
						wgtNext[s]++
					}
					// Backwards start in micro-batch order: m < consumed.
					for m := wgtNext[s]; m < consumed[s]; m++ {
						if !ins[w][m].started && ready(w, m, t) {
							consider(cand{w, m, s, 0, false})
							break
						}
					}
				}
				m := consumed[s]
				if m < n && ins[q.fwd[s]][m].started && ins[q.fwd[s]][m].end <= t {
					sv := &saves[s][m]
					c := q.bwd[s]
					others := true
					for _, dep := range preds[c] {
						if dep.From == q.fwd[s] {
							continue
						}
						x := ins[dep.From][m]
						if !x.started || x.start+p.Delay(dep) > t {
							others = false
						}
					}
					switch sv.action {
					case placement.Recompute:
						if sv.rerun < 0 && others && mem[d]+p.Freed(q.fwd[s], placement.Recompute) <= budgetOr(budget[d]) {
							consider(cand{q.fwd[s], m, s, 1, true})
						}
						if sv.rerun >= 0 && sv.rerunEnd <= t && others {
							consider(cand{c, m, s, 2, false})
						}
					case placement.Offload:
						if sv.relEnd >= 0 && sv.relEnd <= t && others {
							consider(cand{c, m, s, 2, false})
						}
					default:
						if others {
							consider(cand{c, m, s, 2, false})
						}
					}
				}
				if f := nextF[s]; f < n && f-consumed[s] < pol.fill[s] && !reserve[d] && ready(q.fwd[s], f, t) &&
					mem[d]+fmem(s) <= budgetOr(budget[d]) {
					consider(cand{q.fwd[s], f, s, 3, false})
				}
			}
			if best == nil {
				continue
			}
			b := p.Blocks[best.block]
			busy[d] = t + b.Time
			changed = true
			at(t + b.Time)
			if best.rerun {
				sv := &saves[best.stage][best.micro]
				sv.rerun, sv.rerunEnd = t, t+b.Time
				mem[d] += p.Freed(best.block, placement.Recompute)
				continue
			}
			ins[best.block][best.micro] = memInst{true, t, t + b.Time}
			for _, dep := range succs[best.block] {
				at(t + p.Delay(dep)) // its tensor arrives
			}
			mem[d] += b.Memory
			left--
			switch roles[best.block].kind {
			case 0:
				nextF[best.stage]++
			case 1:
				consumed[best.stage]++
			}
		}
		// 3. Host channels: reloads first, then offloads.
		for s := range S {
			d := q.dev[s]
			c := p.HostChannel(d)
			if chanFree[c] > t {
				continue
			}
			m := consumed[s]
			if m >= n {
				continue
			}
			sv := &saves[s][m]
			T := p.OffloadTime(q.fwd[s])
			if sv.action == placement.Offload && sv.offEnd >= 0 && sv.offEnd <= t && sv.relStart < 0 &&
				othersStarted(q.bwd[s], q.fwd[s], m, t) && mem[d]+fmem(s) <= budgetOr(budget[d]) {
				sv.relStart, sv.relEnd = t, t+T
				changed = true
				at(t + T)
				mem[d] += fmem(s)
				chanFree[c] = t + T
			}
		}
		for s := range S {
			d := q.dev[s]
			c := p.HostChannel(d)
			if chanFree[c] > t {
				continue
			}
			if pol.action[s] != placement.Offload {
				continue
			}
			for offNext[s] < n && saves[s][offNext[s]].offStart >= 0 {
				offNext[s]++
			}
			for m := offNext[s]; m < nextF[s]; m++ {
				sv := &saves[s][m]
				f := ins[q.fwd[s]][m]
				if sv.offStart < 0 && f.end <= t {
					T := p.OffloadTime(q.fwd[s])
					sv.offStart, sv.offEnd = t, t+T
					changed = true
					at(t + T)
					chanFree[c] = t + T
					break
				}
			}
		}
	}
	var out []schedule.Instance
	for i := range ins {
		for m, x := range ins[i] {
			out = append(out, schedule.Instance{Block: i, Micro: m, Start: x.start})
		}
	}
	var dec []schedule.Decision
	for s := range S {
		for m, sv := range saves[s] {
			switch sv.action {
			case placement.Offload:
				dec = append(dec, schedule.Decision{Block: q.fwd[s], Micro: m, Action: placement.Offload, Start: sv.offStart, Reload: sv.relStart})
			case placement.Recompute:
				dec = append(dec, schedule.Decision{Block: q.fwd[s], Micro: m, Action: placement.Recompute, Start: sv.rerun})
			}
		}
	}
	slices.SortFunc(dec, func(a, b schedule.Decision) int {
		if a.Block != b.Block {
			return a.Block - b.Block
		}
		return a.Micro - b.Micro
	})
	return &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, Instances: out, Decisions: dec}, nil
}

// runMemoryPolicy is simulateMemoryPolicy's schedule, verified.
func runMemoryPolicy(p *placement.Placement, q pipeline, n, memory int, pol memoryPolicy) (*schedule.Schedule, error) {
	s, err := simulateMemoryPolicy(p, q, n, memory, pol)
	if err != nil {
		return nil, err
	}
	return verifiedPolicy(s, pol)
}

// verifiedPolicy is s, the schedule of pol, once it passes the verifier.
func verifiedPolicy(s *schedule.Schedule, pol memoryPolicy) (*schedule.Schedule, error) {
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("%s: placement %q: schedule fails verification: %w", pol.name, s.Placement.Name, err)
	}
	return s, nil
}

// budgetOr is a device budget, with 0 (unlimited) as no bound.
func budgetOr(b int) int {
	if b <= 0 {
		return int(^uint(0) >> 2)
	}
	return b
}

// intHeap is a min-heap of times (container/heap).
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
