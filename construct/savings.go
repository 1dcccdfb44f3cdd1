package construct

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Savings lets a list schedule offload or recompute activations where its
// block allows it (placement's "Memory as a decision"; Qi et al.,
// "OptPipe: Memory- and Scheduling-Optimized Pipeline Parallelism", §3).
type Savings struct {
	Offload   bool // offload activations of offloadable blocks
	Recompute bool // recompute activations of recomputable blocks
	// PreferRecompute decides for a recompute where both are allowed
	// (otherwise an offload, which costs no device time).
	PreferRecompute bool
	// Balance, where both are allowed, offloads when the host channel is
	// free by the forward's end and recomputes otherwise (PreferRecompute
	// is then ignored).
	Balance bool
	// Always takes the decision for every instance that allows one;
	// otherwise only where the budget binds: where the device, with the
	// forward's activation, could not take one more forward. Either way
	// an instance whose consumer follows too soon for the decision to
	// free anything (the move there and back, or the second run, does
	// not fit between the forward's end and the consumer's earliest
	// start) keeps its activation, unless Eager.
	Always bool
	Eager  bool
	// Early asks for a reload (or a recompute) as soon as every other
	// predecessor of its consumer is released — its own predecessors
	// have started — instead of when the last of them starts, so the move
	// back hides behind that predecessor's run instead of delaying the
	// consumer. It holds the memory longer.
	Early bool
	// MinLife, with ListOptions.Priority (a reference schedule's starts),
	// decides only for instances whose activation lives at least MinLife
	// in the reference (its consumer's start less its forward's end);
	// the others keep theirs unless the budget binds and Always is off.
	// PipeOffload's rule: offload the activations that live long.
	MinLife int
	// Blocks, when set, is the action per block for every instance (a
	// decided repetend's: Keep, Offload or Recompute), taken whatever the
	// budget, where the block and Offload and Recompute allow it; the
	// other fields but Early are then ignored.
	Blocks []placement.Action
}

func (sv Savings) any() bool { return sv.Offload || sv.Recompute }

// String names the policy in a candidate's name.
func (sv Savings) String() string {
	var s string
	switch {
	case sv.Offload && sv.Recompute && sv.Balance:
		s = "offload|recompute"
	case sv.Offload && sv.Recompute && sv.PreferRecompute:
		s = "recompute+offload"
	case sv.Offload && sv.Recompute:
		s = "offload+recompute"
	case sv.Offload:
		s = "offload"
	case sv.Recompute:
		s = "recompute"
	default:
		return "keep"
	}
	if sv.Always {
		s += " always"
	}
	if sv.Eager {
		s += " eager"
	}
	if sv.Early {
		s += " early"
	}
	if sv.MinLife > 0 {
		s += fmt.Sprintf(" life %d", sv.MinLife)
	}
	if sv.Blocks != nil {
		s += " per block"
	}
	return s
}

// saver is the part of a list schedule that offloads and recomputes.
//
// Memory is reserved conservatively: a forward's memory at its start, a
// reload's when it is booked (at or before its start), a recompute's at
// its start; frees are applied when they happen (an offload's end, a
// recomputed forward's end). So the running count never falls below the
// device's real memory at any later time, and every start it admits fits.
type saver struct {
	opt       Savings
	consumers []int
	act       []placement.Action // per block: the action allowed and chosen by policy order, Keep when none
	fwdMax    []int              // per device: the largest forward memory on it
	gap       []int              // per block: the least time from its end to its consumer's start
	// per forward instance x: the decision taken (zero Action: kept)
	dec []schedule.Decision
	// per consumer instance y: the forward instance whose activation it
	// waits for (-1: none), and whether its reload or recompute is asked
	// for.
	need      []int
	requested []bool
	// offEnd[x] is when the offload of x ends.
	offEnd   []int
	chanFree map[int]int
	frees    freeHeap
	pending  [][]int // per device: consumers whose reload is asked for and not booked
	rerunAt  []int   // per consumer: when its recompute may start
	rerunOn  []bool  // per consumer: its recompute started
	// unreleased[y] counts y's predecessors not yet released (Early).
	unreleased []int
}

func newSaver(l *lister) *saver {
	p := l.p
	nk := l.n * l.k
	sv := &saver{opt: l.opt.Savings, consumers: p.Consumers(), chanFree: map[int]int{},
		dec: make([]schedule.Decision, nk), need: make([]int, nk), requested: make([]bool, nk),
		offEnd: make([]int, nk), pending: make([][]int, p.Devices), rerunAt: make([]int, nk), rerunOn: make([]bool, nk),
		act: make([]placement.Action, l.k), fwdMax: make([]int, p.Devices), gap: make([]int, l.k)}
	for x := range sv.need {
		sv.need[x] = -1
	}
	if sv.opt.Early {
		sv.unreleased = make([]int, nk)
		preds := p.PredDeps()
		for x := range sv.unreleased {
			sv.unreleased[x] = len(preds[x%l.k])
		}
	}
	for i, b := range p.Blocks {
		off := sv.opt.Offload && p.Offloadable(i, sv.consumers)
		rec := sv.opt.Recompute && p.Recomputable(i, sv.consumers)
		switch {
		case sv.opt.Blocks != nil:
			sv.act[i] = placement.Keep
			if a := sv.opt.Blocks[i]; (a == placement.Offload && off) || (a == placement.Recompute && rec) {
				sv.act[i] = a
			}
		case off && (!rec || !sv.opt.PreferRecompute):
			sv.act[i] = placement.Offload
		case rec:
			sv.act[i] = placement.Recompute
		default:
			sv.act[i] = placement.Keep
		}
		if b.Kind == placement.Forward {
			for _, d := range b.Devices {
				sv.fwdMax[d] = max(sv.fwdMax[d], b.Memory)
			}
		}
		if c := sv.consumers[i]; c >= 0 {
			// From i's end to its consumer's start at least: the
			// longest path between them (heads measured from i).
			sv.gap[i] = longest(p, i, c) - b.Time
		}
	}
	return sv
}

// longest is the longest start-to-start dependency path from a to b (0
// when b does not follow a).
func longest(p *placement.Placement, a, b int) int {
	order, _ := p.Topo()
	far := make([]int, len(p.Blocks))
	for i := range far {
		far[i] = -1
	}
	far[a] = 0
	succs := p.SuccDeps()
	for _, i := range order {
		if far[i] < 0 {
			continue
		}
		for _, d := range succs[i] {
			far[d.To] = max(far[d.To], far[i]+p.Delay(d))
		}
	}
	return max(far[b], 0)
}

// decide takes the decision for forward instance x as it starts at now.
func (sv *saver) decide(l *lister, x, now int) {
	p := l.p
	i := x % l.k
	a := sv.act[i]
	if a == placement.Keep {
		return
	}
	b := p.Blocks[i]
	// Where the consumer follows too soon for the move there and back
	// (or the second run), keeping costs nothing more.
	cost := b.Time
	if a == placement.Offload {
		cost = 2 * p.OffloadTime(i)
	}
	if !sv.opt.Eager && sv.gap[i] < cost && sv.opt.Blocks == nil {
		return
	}
	long := sv.opt.Blocks != nil
	if pr := l.opt.Priority; sv.opt.MinLife > 0 && pr != nil {
		y := (x/l.k)*l.k + sv.consumers[i]
		long = pr[y]-pr[x]-b.Time >= sv.opt.MinLife
		if !long && sv.opt.Always {
			return
		}
	}
	if !sv.opt.Always && !long {
		binds := false
		for _, d := range b.Devices {
			if bud := p.Budget(d, l.opt.Memory); bud > 0 && l.mem[d]+sv.fwdMax[d] > bud {
				binds = true
			}
		}
		if !binds {
			return
		}
	}
	end := now + b.Time
	m := x / l.k
	y := m*l.k + sv.consumers[i]
	if sv.opt.Balance && sv.opt.Blocks == nil && p.Offloadable(i, sv.consumers) && p.Recomputable(i, sv.consumers) {
		a = placement.Offload
		for _, c := range p.BlockSwitches(i) {
			if sv.chanFree[c] > end {
				a = placement.Recompute
			}
		}
	}
	switch a {
	case placement.Offload:
		t := p.OffloadTime(i)
		start := end
		chans := p.BlockSwitches(i)
		for _, c := range chans {
			start = max(start, sv.chanFree[c])
		}
		for _, c := range chans {
			sv.chanFree[c] = start + t
		}
		sv.offEnd[x] = start + t
		sv.dec[x] = schedule.Decision{Block: i, Micro: m, Action: placement.Offload, Start: start}
		sv.free(l, i, start+t, p.Freed(i, a))
	case placement.Recompute:
		sv.dec[x] = schedule.Decision{Block: i, Micro: m, Action: placement.Recompute}
		sv.free(l, i, end, p.Freed(i, a))
		sv.rerunAt[y] = end
	}
	sv.need[y] = x
	l.waiting[y]++
}

// released notes that instance x was released at now (Early): a consumer
// whose other predecessors are all released asks for its reload.
func (sv *saver) released(l *lister, x, now int) {
	if sv.unreleased == nil || x >= l.n*l.k {
		return
	}
	m := x / l.k
	for _, dep := range l.succs[x%l.k] {
		y := m*l.k + dep.To
		sv.unreleased[y]--
		if sv.unreleased[y] == 0 {
			sv.request(l, y, now)
		}
	}
}

// free books the release of amount on block i's devices at time at.
func (sv *saver) free(l *lister, i, at, amount int) {
	for _, d := range l.p.Blocks[i].Devices {
		heap.Push(&sv.frees, freeAt{at, d, amount})
	}
	heap.Push(&l.events, at)
}

// request asks for the reload or recompute consumer y waits for once
// every other predecessor of y has started.
func (sv *saver) request(l *lister, y, now int) {
	x := sv.need[y]
	if x < 0 || sv.requested[y] || (l.waiting[y] != 1 && !(sv.opt.Early && sv.unreleased[y] == 0)) {
		return
	}
	sv.requested[y] = true
	switch sv.dec[x].Action {
	case placement.Offload:
		d := l.p.Blocks[x%l.k].Devices[0]
		sv.pending[d] = append(sv.pending[d], y)
		sv.book(l, now)
	case placement.Recompute:
		r := l.n*l.k + y
		sv.rerunAt[y] = max(sv.rerunAt[y], now)
		for _, d := range l.p.Blocks[x%l.k].Devices {
			l.queue[d].push(r, l.queueClass(r))
		}
		heap.Push(&l.events, sv.rerunAt[y])
	}
}

// advance applies the frees due by now and books the reloads that fit.
func (sv *saver) advance(l *lister, now int) {
	for sv.frees.Len() > 0 && sv.frees[0].at <= now {
		f := heap.Pop(&sv.frees).(freeAt)
		l.mem[f.device] -= f.amount
	}
	sv.book(l, now)
}

// book books every pending reload that fits, per device in the rule's
// order of consumers; a reload that does not fit holds back the ones
// after it.
func (sv *saver) book(l *lister, now int) {
	p := l.p
	for d, ys := range sv.pending {
		if len(ys) == 0 {
			continue
		}
		slices.SortFunc(ys, func(a, b int) int {
			switch {
			case a == b:
				return 0
			case l.before(a, b):
				return -1
			}
			return 1
		})
		k := 0
		for ; k < len(ys); k++ {
			y := ys[k]
			x := sv.need[y]
			i := x % l.k
			amount := p.Freed(i, placement.Offload)
			fits := true
			for _, e := range p.Blocks[i].Devices {
				if bud := p.Budget(e, l.opt.Memory); bud > 0 && l.mem[e]+amount > bud {
					fits = false
				}
			}
			if !fits {
				break
			}
			t := p.OffloadTime(i)
			chans := p.BlockSwitches(i)
			start := max(now, sv.offEnd[x], l.ready[y]-t)
			for _, c := range chans {
				start = max(start, sv.chanFree[c])
			}
			for _, c := range chans {
				sv.chanFree[c] = start + t
			}
			for _, e := range p.Blocks[i].Devices {
				l.mem[e] += amount
			}
			sv.dec[x].Reload = start
			l.ready[y] = max(l.ready[y], start+t)
			l.waiting[y]--
			if l.waiting[y] == 0 {
				l.release(y)
			}
		}
		sv.pending[d] = ys[k:]
	}
}

// canStart is the lister's canStart with decisions: a recompute
// (x ≥ n·K) starts where its devices are free and its memory fits; a
// block that takes memory waits while a reload on its devices waits for
// memory.
func (sv *saver) canStart(l *lister, x, now int) bool {
	p := l.p
	nk := l.n * l.k
	if x >= nk {
		y := x - nk
		if sv.rerunOn[y] || sv.rerunAt[y] > now {
			return false
		}
		i := sv.need[y] % l.k
		amount := p.Freed(i, placement.Recompute)
		for _, d := range p.Blocks[i].Devices {
			if l.free[d] > now {
				return false
			}
			if bud := p.Budget(d, l.opt.Memory); bud > 0 && l.mem[d]+amount > bud {
				return false
			}
		}
		return true
	}
	if l.ready[x] > now {
		return false
	}
	b := p.Blocks[x%l.k]
	for _, d := range b.Devices {
		if l.free[d] > now {
			return false
		}
		if bud := p.Budget(d, l.opt.Memory); bud > 0 && b.Memory > 0 && (l.mem[d]+b.Memory > bud || len(sv.pending[d]) > 0) {
			return false
		}
	}
	return true
}

// rerun starts the recompute r = n·K + y at now.
func (sv *saver) rerun(l *lister, r, now int) {
	p := l.p
	y := r - l.n*l.k
	x := sv.need[y]
	i := x % l.k
	sv.rerunOn[y] = true
	sv.dec[x].Start = now
	end := now + p.Blocks[i].Time
	for _, d := range p.Blocks[i].Devices {
		l.free[d] = end
		l.mem[d] += p.Freed(i, placement.Recompute)
	}
	heap.Push(&l.events, end)
	l.ready[y] = max(l.ready[y], end)
	l.waiting[y]--
	if l.waiting[y] == 0 {
		l.release(y)
	}
}

// stuck explains a schedule stuck on a reload.
func (sv *saver) stuck(l *lister) error {
	for d, ys := range sv.pending {
		if len(ys) > 0 {
			x := sv.need[ys[0]]
			return fmt.Errorf("construct: list schedule stuck: the reload of %s^%d waits for memory on device %d (budgets %v)",
				l.p.Blocks[x%l.k].ID, x/l.k, d, l.p.Budgets(l.opt.Memory))
		}
	}
	return nil
}

// finish is the verified schedule with its decisions, starts as the list
// schedule gave them (compaction does not know the host channels).
func (sv *saver) finish(l *lister) (*schedule.Schedule, error) {
	p := l.p
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: l.n, Memory: l.opt.Memory}}
	s.Instances = make([]schedule.Instance, 0, l.n*l.k)
	for x, t := range l.starts {
		s.Instances = append(s.Instances, schedule.Instance{Block: x % l.k, Micro: x / l.k, Start: t})
	}
	s.Sort()
	for _, dc := range sv.dec {
		if dc.Action == placement.Offload || dc.Action == placement.Recompute {
			s.Decisions = append(s.Decisions, dc)
		}
	}
	if links.Queued(p) {
		if err := verify.Schedule(s); err != nil {
			return nil, fmt.Errorf("construct: placement %q: schedule fails verification: %w", p.Name, err)
		}
		return s, nil
	}
	// The reservations are conservative: compaction may start things
	// earlier, never later, with the same memory. Compact verifies what
	// it returns; verifying s first as well cost a sixth of a search at
	// 10,000 micro-batches.
	return compact.Compact(s.Spec, compact.Keep{From: s, Built: true})
}

type freeAt struct{ at, device, amount int }

type freeHeap []freeAt

func (h freeHeap) Len() int { return len(h) }
func (h freeHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].device < h[j].device
}
func (h freeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *freeHeap) Push(v any)   { *h = append(*h, v.(freeAt)) }
func (h *freeHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
