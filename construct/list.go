package construct

import (
	"container/heap"
	"context"
	"fmt"
	"sort"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Rule is the priority of a list schedule: among the instances that may
// start on a free device, the one it ranks first starts.
type Rule int

const (
	// OldestFirst runs the oldest micro-batch first, then the block with
	// the longest path after it: the 1F1B rule (a waiting backward of an
	// older micro-batch beats a forward of a newer one).
	OldestFirst Rule = iota
	// GradientFirst runs the gradients the previous stage waits for first
	// (roles backward and input), then forwards, then deferrable gradients
	// (role weight), each oldest first: the zero-bubble rule, which leaves
	// weight gradients to fill the bubbles. Roles come from the graph
	// (placement's Roles), not from the blocks' kinds.
	GradientFirst
	// LongestPath runs the block with the longest path after it first,
	// then the oldest: the critical-path rule of list scheduling.
	LongestPath
	// GroupedGradientFirst is GradientFirst over groups of as many
	// micro-batches as devices, with the longest path first inside a
	// group: the order of interleaved schedules, which run each chunk for
	// a group of micro-batches before the next chunk.
	GroupedGradientFirst
	// GroupedOldestFirst is OldestFirst over groups of as many
	// micro-batches as devices, longest path first inside a group.
	GroupedOldestFirst
	numRules
)

// Rules lists every rule in a stable order.
func Rules() []Rule {
	out := make([]Rule, numRules)
	for r := range out {
		out[r] = Rule(r)
	}
	return out
}

func (r Rule) String() string {
	switch r {
	case OldestFirst:
		return "oldest-first"
	case GradientFirst:
		return "gradient-first"
	case LongestPath:
		return "longest-path"
	case GroupedGradientFirst:
		return "grouped-gradient-first"
	case GroupedOldestFirst:
		return "grouped-oldest-first"
	}
	return fmt.Sprintf("rule(%d)", int(r))
}

// ListOptions configure one list schedule.
type ListOptions struct {
	Rule Rule
	// Window is the most micro-batches in flight (started, not finished);
	// 0 means no limit. It keeps a memory-aware list schedule from filling
	// every device with forwards that then cannot drain.
	Window int
	// Memory is the per-device budget (0: unlimited): an instance starts
	// only where it fits.
	Memory int
	// Perturb, when positive, is a restart index: the longest-path
	// priorities of the blocks are scaled by a factor in [0.8, 1.2] drawn
	// from a generator seeded with it, so each restart orders the blocks
	// a little differently, the same way on every run. 0 leaves them as
	// they are.
	Perturb int
	// Priority, when set, ranks instance x = m·K + i (lower first) and
	// replaces the rule: a list schedule that follows another schedule's
	// order (the start times of a modulo schedule under a looser budget).
	Priority []int
	// Savings lets the schedule offload or recompute activations
	// (placement's "Memory as a decision"); the zero value keeps every
	// activation, as before.
	Savings Savings
}

// List is a list schedule of n micro-batches of p (the parallel schedule
// generation scheme of resource-constrained project scheduling): time
// advances from event to event, and at each event every free device
// starts the first instance, in the rule's order, whose predecessors have
// ended, whose devices are all free and whose memory fits. It needs no
// solver and takes O(n·K·log(n·K)) time for K blocks, plus the scans of
// instances released but not ready yet (a block that waits for its
// devices or memory is passed over at once, whatever its micro-batches).
//
// It returns an error when the schedule gets stuck: every device idle,
// nothing running, and no waiting instance fits the memory budget. The
// schedule is verified.
func List(p *placement.Placement, n int, opt ListOptions) (*schedule.Schedule, error) {
	return list(context.Background(), p, n, opt)
}

// list is List, stopping with ctx's error when ctx ends (its time grows
// with n·K: it checks ctx as it goes).
func list(ctx context.Context, p *placement.Placement, n int, opt ListOptions) (*schedule.Schedule, error) {
	if err := checkArgs(p, n, opt.Memory); err != nil {
		return nil, err
	}
	if opt.Priority != nil && len(opt.Priority) != n*len(p.Blocks) {
		return nil, fmt.Errorf("construct: %d priorities for %d instances", len(opt.Priority), n*len(p.Blocks))
	}
	l := newLister(p, n, opt)
	l.ctx = ctx
	if err := l.run(); err != nil {
		return nil, err
	}
	if l.sv != nil {
		return l.sv.finish(l)
	}
	return finish(ctx, p, n, opt.Memory, l.starts, nil)
}

// lister is the state of one list schedule. Instance x is block x%K of
// micro-batch x/K.
type lister struct {
	p      *placement.Placement
	n, k   int
	opt    ListOptions
	rank   []int // of each block, within a micro-batch (rule-dependent)
	class  []int // of each block: the rule's first key
	tail   []int
	preds  [][]placement.Dep
	succs  [][]placement.Dep
	starts []int
	// waiting[x] counts the predecessors of x that have not started;
	// ready[x] is when x may start once all have.
	waiting []int
	ready   []int
	started []bool
	// left[m] counts the instances of micro-batch m not yet ended.
	left []int
	// inFlight counts micro-batches with a started instance and an
	// instance not ended; admitted is the next micro-batch whose entry
	// instances are not released yet.
	inFlight, admitted int
	entry              []int // blocks with no predecessor
	free               []int // per device: when it is free
	mem                []int
	queue              []*devQueue // per device: released instances
	events             intHeap     // times at which something may change
	ends               endHeap     // running instances by end time
	// links times the transfers: instances start in time order, so the
	// queue books them in the order the rule asks (placement's LinkQueue).
	links *placement.LinkQueue
	// sv holds the offload and recompute decisions (nil without
	// Savings).
	sv  *saver
	now int // the time of the event being handled
	ctx context.Context
}

func newLister(p *placement.Placement, n int, opt ListOptions) *lister {
	k := len(p.Blocks)
	l := &lister{p: p, n: n, k: k, opt: opt,
		tail: p.Tails(), preds: p.PredDeps(), succs: p.SuccDeps(),
		starts: make([]int, n*k), waiting: make([]int, n*k), ready: make([]int, n*k),
		started: make([]bool, n*k), left: make([]int, n),
		free: make([]int, p.Devices), mem: make([]int, p.Devices),
		queue: make([]*devQueue, p.Devices), links: p.NewLinkQueue(),
	}
	l.class = make([]int, k)
	// The rules read each block's role from the graph (placement's
	// Roles), never its kind: a deferrable gradient waits behind the
	// forwards whatever it is called.
	roles := p.Roles()
	for i := range p.Blocks {
		if opt.Rule == GradientFirst || opt.Rule == GroupedGradientFirst {
			switch r := roles[i]; {
			case r.Waited():
				l.class[i] = 0
			case !r.Gradient():
				l.class[i] = 1
			default:
				l.class[i] = 2
			}
		}
		if len(l.preds[i]) == 0 {
			l.entry = append(l.entry, i)
		}
	}
	// Within a micro-batch, the longest path after a block first, then
	// the block index: a total order, so the schedule is deterministic.
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	key := make([]int, k)
	var rng *rand
	if opt.Perturb > 0 {
		rng = newRand(uint64(opt.Perturb))
	}
	for i := range key {
		key[i] = l.tail[i] + p.Blocks[i].Time
		if rng != nil {
			key[i] *= 80 + rng.intn(41)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if key[x] != key[y] {
			return key[x] > key[y]
		}
		return x < y
	})
	l.rank = make([]int, k)
	for r, i := range order {
		l.rank[i] = r
	}
	for d := range l.queue {
		l.queue[d] = newDevQueue(2*k, l.before)
	}
	if opt.Savings.any() {
		l.sv = newSaver(l)
	}
	for m := range n {
		l.left[m] = k
		for i := range k {
			l.waiting[m*k+i] = len(l.preds[i])
		}
	}
	return l
}

// before is the rule's order of two instances. A recompute (x ≥ n·K,
// standing for its consumer x − n·K) comes just before its consumer.
func (l *lister) before(x, y int) bool {
	nk := l.n * l.k
	if x >= nk || y >= nk {
		cx, cy := x%nk, y%nk
		if cx != cy {
			return l.before(cx, cy)
		}
		return x > y
	}
	mx, my := x/l.k, y/l.k
	bx, by := x%l.k, y%l.k
	if pr := l.opt.Priority; pr != nil {
		if pr[x] != pr[y] {
			return pr[x] < pr[y]
		}
		if l.rank[bx] != l.rank[by] {
			return l.rank[bx] < l.rank[by]
		}
		return mx < my
	}
	switch l.opt.Rule {
	case GradientFirst:
		if l.class[bx] != l.class[by] {
			return l.class[bx] < l.class[by]
		}
	case GroupedGradientFirst, GroupedOldestFirst:
		if l.class[bx] != l.class[by] {
			return l.class[bx] < l.class[by]
		}
		g := max(1, l.p.Devices)
		if mx/g != my/g {
			return mx/g < my/g
		}
		if l.rank[bx] != l.rank[by] {
			return l.rank[bx] < l.rank[by]
		}
	case LongestPath:
		if l.rank[bx] != l.rank[by] {
			return l.rank[bx] < l.rank[by]
		}
	}
	if mx != my {
		return mx < my
	}
	return l.rank[bx] < l.rank[by]
}

// release puts x in the queues of its devices from time l.ready[x].
func (l *lister) release(x int) {
	for _, d := range l.p.Blocks[x%l.k].Devices {
		l.queue[d].push(x, l.queueClass(x))
	}
	heap.Push(&l.events, l.ready[x])
	if l.sv != nil {
		l.sv.released(l, x, l.now)
	}
}

// admit releases the entry instances of micro-batches while the window
// allows.
func (l *lister) admit() {
	for l.admitted < l.n && (l.opt.Window <= 0 || l.inFlight < l.opt.Window) {
		m := l.admitted
		l.admitted++
		l.inFlight++
		for _, i := range l.entry {
			l.release(m*l.k + i)
		}
	}
}

func (l *lister) run() error {
	total := l.n * l.k
	done := 0
	l.admit()
	heap.Push(&l.events, 0)
	for step := 0; done < total; step++ {
		if l.events.Len() == 0 {
			return l.stuck()
		}
		if step%4096 == 0 && l.ctx != nil && l.ctx.Err() != nil {
			return l.ctx.Err()
		}
		now := heap.Pop(&l.events).(int)
		l.now = now
		for l.events.Len() > 0 && l.events[0] == now {
			heap.Pop(&l.events)
		}
		// End what ends by now: devices free up, memory was already
		// counted at the start, micro-batches leave the window.
		for l.ends.Len() > 0 && l.ends[0].end <= now {
			e := heap.Pop(&l.ends).(running)
			m := e.x / l.k
			l.left[m]--
			if l.left[m] == 0 {
				l.inFlight--
				l.admit()
			}
		}
		if l.sv != nil {
			l.sv.advance(l, now)
		}
		for d := range l.p.Devices {
			if l.free[d] > now {
				continue
			}
			if x := l.pick(d, now); x >= 0 {
				if x >= total {
					l.sv.rerun(l, x, now)
					continue
				}
				l.start(x, now)
				done++
				if l.sv != nil {
					l.sv.book(l, now)
				}
			}
		}
	}
	return nil
}

// pick returns the first instance in d's queue that can start at now on
// all its devices, or -1. Instances that are not ready yet or wait for
// memory stay queued.
func (l *lister) pick(d, now int) int {
	nk := len(l.started)
	stale := func(x int) bool { // started from another device's queue
		return x < nk && l.started[x] || x >= nk && l.sv.rerunOn[x-nk]
	}
	ready := func(x int) bool { // what canStart asks of x alone
		if x >= nk {
			return l.sv.rerunAt[x-nk] <= now
		}
		return l.ready[x] <= now
	}
	return l.queue[d].pick(l.queueClass, stale, ready, func(x int) bool { return l.canStart(x, now) })
}

// queueClass is the queue class of instance x: its block, or K plus the
// block of the forward that recompute x runs again. Two instances of a
// class need the same devices and memory (canStart).
func (l *lister) queueClass(x int) int {
	if nk := l.n * l.k; x >= nk {
		return l.k + l.sv.need[x-nk]%l.k
	}
	return x % l.k
}

func (l *lister) canStart(x, now int) bool {
	if l.sv != nil {
		return l.sv.canStart(l, x, now)
	}
	if l.ready[x] > now {
		return false
	}
	b := l.p.Blocks[x%l.k]
	for _, d := range b.Devices {
		if l.free[d] > now {
			return false
		}
		if bud := l.p.Budget(d, l.opt.Memory); bud > 0 && b.Memory > 0 && l.mem[d]+b.Memory > bud {
			return false
		}
	}
	return true
}

func (l *lister) start(x, now int) {
	b := l.p.Blocks[x%l.k]
	l.started[x] = true
	l.starts[x] = now
	end := now + b.Time
	for _, d := range b.Devices {
		l.free[d] = end
		l.mem[d] += b.Memory
	}
	heap.Push(&l.ends, running{x: x, end: end})
	heap.Push(&l.events, end)
	if l.sv != nil {
		l.sv.decide(l, x, now)
	}
	m := x / l.k
	for _, dep := range l.succs[x%l.k] {
		y := m*l.k + dep.To
		at, _, _ := l.links.Arrival(dep, now)
		l.ready[y] = max(l.ready[y], at)
		l.waiting[y]--
		if l.waiting[y] == 0 {
			l.release(y)
		} else if l.sv != nil {
			l.sv.request(l, y, now)
		}
	}
	if l.sv != nil && l.sv.dec[x].Action != "" {
		l.sv.request(l, m*l.k+l.sv.consumers[x%l.k], now)
	}
}

// stuck explains why the schedule cannot go on.
func (l *lister) stuck() error {
	if l.sv != nil {
		if err := l.sv.stuck(l); err != nil {
			return err
		}
	}
	for x, s := range l.started {
		if !s && l.waiting[x] == 0 && x/l.k < l.admitted {
			b := l.p.Blocks[x%l.k]
			return fmt.Errorf("construct: list schedule stuck: %s^%d waits for memory on %v (budgets %v)", b.ID, x/l.k, b.Devices, l.p.Budgets(l.opt.Memory))
		}
	}
	return fmt.Errorf("construct: list schedule stuck")
}

// running is a started instance and its end.
type running struct{ x, end int }

type endHeap []running

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if h[i].end != h[j].end {
		return h[i].end < h[j].end
	}
	return h[i].x < h[j].x
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(v any)   { *h = append(*h, v.(running)) }
func (h *endHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(v any)        { *h = append(*h, v.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// prioQueue is a heap of instances in a rule's order.
type prioQueue struct {
	xs   []int
	less func(x, y int) bool
}

func (q *prioQueue) Len() int           { return len(q.xs) }
func (q *prioQueue) Less(i, j int) bool { return q.less(q.xs[i], q.xs[j]) }
func (q *prioQueue) Swap(i, j int)      { q.xs[i], q.xs[j] = q.xs[j], q.xs[i] }
func (q *prioQueue) Push(v any)         { q.xs = append(q.xs, v.(int)) }
func (q *prioQueue) Pop() any {
	v := q.xs[len(q.xs)-1]
	q.xs = q.xs[:len(q.xs)-1]
	return v
}
