package baseline

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
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
	if links.Queued(p) {
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
	sim, err := newPolicySim(p, q, n, memory, pol)
	if err != nil {
		return nil, err
	}
	S := sim.S
	for s := range S {
		// A forward needs its whole activation while it runs.
		if b := sim.budget[q.dev[s]]; b > 0 && sim.fmem(s) > b {
			return nil, fmt.Errorf("%s: placement %q: forward %s takes %d, over the budget %d of device %d: %w",
				pol.name, p.Name, p.Blocks[q.fwd[s]].ID, sim.fmem(s), b, q.dev[s], ErrNoSchedule)
		}
	}
	for t := 0; sim.left > 0; t = sim.step(t) {
		if t > sim.limit {
			return nil, fmt.Errorf("%s: placement %q: stuck at time %d with %d instances left: the policy does not fit the budget %s: %w",
				pol.name, p.Name, t, sim.left, BudgetText(p, memory), ErrNoSchedule)
		}
		// 1. Frees.
		sim.frees(t)
		// Devices with a reload that waits for memory start no forward.
		reserve := make([]bool, p.Devices)
		for s := range S {
			m := sim.consumed[s]
			sv := sim.saves[s]
			if m < n && sv[m].action == placement.Offload && sv[m].offEnd >= 0 && sv[m].offEnd <= t && sv[m].relStart < 0 &&
				sim.othersStarted(q.bwd[s], q.fwd[s], m, t) {
				reserve[q.dev[s]] = true
			}
		}
		// 2. Block starts.
		for d := range p.Devices {
			if sim.busy[d] <= t {
				sim.startOn(d, t, reserve[d])
			}
		}
		// 3. Host channels: reloads first, then offloads.
		sim.reloads(t)
		sim.offloads(t)
	}
	return sim.schedule(), nil
}

// policyRole is a pipeline block's stage and kind: 0 forward, 1 input or
// whole backward, 2 weight.
type policyRole struct{ stage, kind int }

// policyCand is an instance a device may start: block of micro-batch
// micro of stage, by priority (lowest first); rerun marks the second run
// of a recomputed forward.
type policyCand struct {
	block, micro, stage, prio int
	rerun                     bool
}

// policySim is the state of simulateMemoryPolicy's list scheduling.
type policySim struct {
	p            *placement.Placement
	q            pipeline
	n, memory    int
	pol          memoryPolicy
	S            int
	preds, succs [][]placement.Dep
	budget       []int
	roles        map[int]policyRole
	ins          [][]memInst
	saves        [][]memSave
	mem, busy    []int // each device's memory, and when it is next free
	chanFree     map[int]int
	nextF        []int // next micro-batch each stage forwards
	consumed     []int // backwards started per stage
	// Cursors keep each time step's scans to the micro-batches in flight
	// (a whole-N scan per step made the policy quadratic in N): every
	// micro-batch below a cursor can no longer match its scan.
	offFree []int // offloads that ended before t
	recFree []int // recomputed forwards that ended before t
	offNext []int // offloads started
	wgtNext []int // weight blocks started
	left    int   // instances not started
	limit   int   // the time past which the policy is stuck
	// A step that changes nothing is followed by the next time at which
	// a condition below can change — a device or host channel gets free,
	// an instance, move or rerun ends, a tensor arrives (every such time
	// is queued as it is set) — rather than by t+1: the same schedule,
	// without a pass per time unit (placements in real units have fine
	// steps).
	changed bool
	events  intHeap
}

func newPolicySim(p *placement.Placement, q pipeline, n, memory int, pol memoryPolicy) (*policySim, error) {
	S := q.stages()
	sim := &policySim{p: p, q: q, n: n, memory: memory, pol: pol, S: S, preds: p.PredDeps(), succs: p.SuccDeps(), budget: p.Budgets(memory),
		roles: map[int]policyRole{}, mem: make([]int, p.Devices), busy: make([]int, p.Devices), chanFree: map[int]int{},
		nextF: make([]int, S), consumed: make([]int, S), offFree: make([]int, S), recFree: make([]int, S), offNext: make([]int, S), wgtNext: make([]int, S),
		left: n * p.K()}
	for s := range S {
		sim.roles[q.fwd[s]] = policyRole{s, 0}
		sim.roles[q.bwd[s]] = policyRole{s, 1}
		if q.split() {
			sim.roles[q.wgt[s]] = policyRole{s, 2}
		}
	}
	if len(sim.roles) != p.K() {
		return nil, notApplicable(pol.name, p, "blocks outside the pipeline")
	}
	sim.ins = make([][]memInst, p.K())
	for i := range sim.ins {
		sim.ins[i] = make([]memInst, n)
	}
	sim.saves = make([][]memSave, S)
	for s := range S {
		sim.saves[s] = make([]memSave, n)
		for m := range n {
			sim.saves[s][m] = memSave{action: pol.action[s], offStart: -1, offEnd: -1, relStart: -1, relEnd: -1, rerun: -1, rerunEnd: -1}
		}
	}
	total := 0
	for _, b := range p.Blocks {
		total += b.Time
	}
	for s := range S {
		total += 2 * p.OffloadTime(q.fwd[s])
	}
	sim.limit = n*total + 1
	return sim, nil
}

// ready: every input of instance (i, m) has arrived by t.
func (sim *policySim) ready(i, m, t int) bool {
	for _, d := range sim.preds[i] {
		x := sim.ins[d.From][m]
		if !x.started || x.start+sim.p.Delay(d) > t {
			return false
		}
	}
	return true
}

// othersStarted: every input of consumer c of micro-batch m other than
// its own forward f has started (the trigger of a reload).
func (sim *policySim) othersStarted(c, f, m, t int) bool {
	for _, d := range sim.preds[c] {
		if d.From != f && (!sim.ins[d.From][m].started || sim.ins[d.From][m].start > t) {
			return false
		}
	}
	return true
}

// fmem is the activation of stage s's forward.
func (sim *policySim) fmem(s int) int { return sim.p.Blocks[sim.q.fwd[s]].Memory }

// at queues time x as one at which a condition may change.
func (sim *policySim) at(x int) { heap.Push(&sim.events, x) }

// step is the time after t to look at next.
func (sim *policySim) step(t int) int {
	if sim.changed {
		sim.changed = false
		return t + 1
	}
	for sim.events.Len() > 0 && sim.events[0] <= t {
		heap.Pop(&sim.events)
	}
	if sim.events.Len() == 0 {
		return sim.limit + 1
	}
	return sim.events[0]
}

// frees gives back the memory of the offloads and the recomputed
// forwards that end at t.
func (sim *policySim) frees(t int) {
	p, q, nextF, saves, mem := sim.p, sim.q, sim.nextF, sim.saves, sim.mem
	offFree, recFree := sim.offFree, sim.recFree
	for s := range sim.S {
		d := q.dev[s]
		switch sim.pol.action[s] {
		case placement.Offload:
			// Offloads start only on forwards that ran (m < nextF).
			for offFree[s] < nextF[s] && saves[s][offFree[s]].offStart >= 0 && saves[s][offFree[s]].offEnd < t {
				offFree[s]++
			}
			for m := offFree[s]; m < nextF[s]; m++ {
				if saves[s][m].offEnd == t {
					mem[d] -= sim.fmem(s)
					sim.changed = true
				}
			}
		case placement.Recompute:
			f := sim.ins[q.fwd[s]]
			for recFree[s] < nextF[s] && f[recFree[s]].end < t {
				recFree[s]++
			}
			for m := recFree[s]; m < nextF[s]; m++ {
				if f[m].end == t {
					mem[d] -= p.Freed(q.fwd[s], placement.Recompute)
					sim.changed = true
				}
			}
		}
	}
}

// startOn starts on idle device d the first ready instance of its
// stages in priority order (see the top of this file); reserve says a
// reload waits for the device's memory, so no forward starts.
func (sim *policySim) startOn(d, t int, reserve bool) {
	q, n, ins := sim.q, sim.n, sim.ins
	var best *policyCand
	consider := func(c policyCand) {
		if best == nil || c.prio < best.prio || c.prio == best.prio && (c.micro < best.micro || c.micro == best.micro && c.stage > best.stage) {
			best = &c
		}
	}
	for s := range sim.S {
		if q.dev[s] != d {
			continue
		}
		// Weight blocks right after their input blocks.
		if q.split() {
			w := q.wgt[s]
			for sim.wgtNext[s] < n && ins[w][sim.wgtNext[s]].started {
				sim.wgtNext[s]++
			}
			// Backwards start in micro-batch order: m < consumed.
			for m := sim.wgtNext[s]; m < sim.consumed[s]; m++ {
				if !ins[w][m].started && sim.ready(w, m, t) {
					consider(policyCand{w, m, s, 0, false})
					break
				}
			}
		}
		if m := sim.consumed[s]; m < n && ins[q.fwd[s]][m].started && ins[q.fwd[s]][m].end <= t {
			sim.considerBackward(s, m, t, consider)
		}
		if f := sim.nextF[s]; f < n && f-sim.consumed[s] < sim.pol.fill[s] && !reserve && sim.ready(q.fwd[s], f, t) &&
			sim.mem[d]+sim.fmem(s) <= budgetOr(sim.budget[d]) {
			consider(policyCand{q.fwd[s], f, s, 3, false})
		}
	}
	if best != nil {
		sim.start(d, t, *best)
	}
}

// considerBackward offers stage s's next backward (of micro-batch m,
// whose forward has ended) or, under recompute, the forward's second run.
func (sim *policySim) considerBackward(s, m, t int, consider func(policyCand)) {
	p, q := sim.p, sim.q
	d := q.dev[s]
	sv := &sim.saves[s][m]
	c := q.bwd[s]
	others := true
	for _, dep := range sim.preds[c] {
		if dep.From == q.fwd[s] {
			continue
		}
		x := sim.ins[dep.From][m]
		if !x.started || x.start+p.Delay(dep) > t {
			others = false
		}
	}
	switch sv.action {
	case placement.Recompute:
		if sv.rerun < 0 && others && sim.mem[d]+p.Freed(q.fwd[s], placement.Recompute) <= budgetOr(sim.budget[d]) {
			consider(policyCand{q.fwd[s], m, s, 1, true})
		}
		if sv.rerun >= 0 && sv.rerunEnd <= t && others {
			consider(policyCand{c, m, s, 2, false})
		}
	case placement.Offload:
		if sv.relEnd >= 0 && sv.relEnd <= t && others {
			consider(policyCand{c, m, s, 2, false})
		}
	default:
		if others {
			consider(policyCand{c, m, s, 2, false})
		}
	}
}

// start runs best on device d from t.
func (sim *policySim) start(d, t int, best policyCand) {
	p := sim.p
	b := p.Blocks[best.block]
	sim.busy[d] = t + b.Time
	sim.changed = true
	sim.at(t + b.Time)
	if best.rerun {
		sv := &sim.saves[best.stage][best.micro]
		sv.rerun, sv.rerunEnd = t, t+b.Time
		sim.mem[d] += p.Freed(best.block, placement.Recompute)
		return
	}
	sim.ins[best.block][best.micro] = memInst{true, t, t + b.Time}
	for _, dep := range sim.succs[best.block] {
		sim.at(t + p.Delay(dep)) // its tensor arrives
	}
	sim.mem[d] += b.Memory
	sim.left--
	switch sim.roles[best.block].kind {
	case 0:
		sim.nextF[best.stage]++
	case 1:
		sim.consumed[best.stage]++
	}
}

// channel is stage s's device, its host channel and whether the channel
// is free at t.
func (sim *policySim) channel(s, t int) (d, c int, free bool) {
	d = sim.q.dev[s]
	c = sim.p.HostChannel(d)
	return d, c, sim.chanFree[c] <= t
}

// reloads starts, on every free host channel, the reload of the next
// backward's offloaded activation once its other inputs have started.
func (sim *policySim) reloads(t int) {
	p, q := sim.p, sim.q
	for s := range sim.S {
		d, c, free := sim.channel(s, t)
		if !free {
			continue
		}
		m := sim.consumed[s]
		if m >= sim.n {
			continue
		}
		sv := &sim.saves[s][m]
		T := p.OffloadTime(q.fwd[s])
		if sv.action == placement.Offload && sv.offEnd >= 0 && sv.offEnd <= t && sv.relStart < 0 &&
			sim.othersStarted(q.bwd[s], q.fwd[s], m, t) && sim.mem[d]+sim.fmem(s) <= budgetOr(sim.budget[d]) {
			sv.relStart, sv.relEnd = t, t+T
			sim.changed = true
			sim.at(t + T)
			sim.mem[d] += sim.fmem(s)
			sim.chanFree[c] = t + T
		}
	}
}

// offloads starts, on every free host channel, the offload of the oldest
// ended forward not offloaded yet.
func (sim *policySim) offloads(t int) {
	p, q := sim.p, sim.q
	for s := range sim.S {
		_, c, free := sim.channel(s, t)
		if !free {
			continue
		}
		if sim.pol.action[s] != placement.Offload {
			continue
		}
		for sim.offNext[s] < sim.n && sim.saves[s][sim.offNext[s]].offStart >= 0 {
			sim.offNext[s]++
		}
		for m := sim.offNext[s]; m < sim.nextF[s]; m++ {
			sv := &sim.saves[s][m]
			f := sim.ins[q.fwd[s]][m]
			if sv.offStart < 0 && f.end <= t {
				T := p.OffloadTime(q.fwd[s])
				sv.offStart, sv.offEnd = t, t+T
				sim.changed = true
				sim.at(t + T)
				sim.chanFree[c] = t + T
				break
			}
		}
	}
}

// schedule is the simulation's schedule: every instance and decision.
func (sim *policySim) schedule() *schedule.Schedule {
	q := sim.q
	var out []schedule.Instance
	for i := range sim.ins {
		for m, x := range sim.ins[i] {
			out = append(out, schedule.Instance{Block: i, Micro: m, Start: x.start})
		}
	}
	var dec []schedule.Decision
	for s := range sim.S {
		for m, sv := range sim.saves[s] {
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
	return &schedule.Schedule{Spec: spec.Spec{Placement: sim.p, MicroBatches: sim.n, Memory: sim.memory}, Instances: out, Decisions: dec}
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
