package construct

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Decided is a modulo schedule that offloads: Unroll micro-batches form
// one repetend of Period, copy c of block i starting at Starts[c·K+i] and,
// when Offload[c·K+i] ≥ 0, its activation offloaded at Offload[c·K+i]
// and reloaded at Reload[c·K+i] (−1 both: kept). Micro-batch j·Unroll+c
// runs copy c shifted by j·Period, its moves too. The decisions may differ
// between the copies of one block, so that a device keeps the activation
// of one micro-batch and offloads the next one's.
type Decided struct {
	Unroll, Period  int
	Starts          []int
	Offload, Reload []int
	excess          int // memory over the budgets, summed over the devices and the times of a period
}

// DecideOptions configure ModuloDecide.
type DecideOptions struct {
	// Memory is the per-device budget (0: unlimited, then nothing is
	// offloaded).
	Memory int
	// Unroll is how many micro-batches one period holds (≥ 1).
	Unroll int
	// MinPeriod is the least period tried (0: the device load bound of
	// Unroll micro-batches); MaxPeriods is how many periods from there
	// are tried, one by one (0: 4·Unroll).
	MinPeriod, MaxPeriods int
	// Restarts is how many placements of the blocks are tried per period
	// (0: 200).
	Restarts int
}

// decideOK reports whether ModuloDecide applies to p: a simple shape
// (oneDeviceEach) and some block that may be offloaded.
func decideOK(p *placement.Placement) bool {
	return oneDeviceEach(p) && p.HasOffload()
}

// oneDeviceEach reports whether p has the shape the constructions that
// decide per instance (ModuloDecide, Belady) time: every block on one
// device, transfers that overlap freely (not rule/links), no overlapped
// pairs.
func oneDeviceEach(p *placement.Placement) bool {
	if links.Queued(p) || p.Overlap != nil {
		return false
	}
	for _, b := range p.Blocks {
		if len(b.Devices) != 1 {
			return false
		}
	}
	return true
}

// ModuloDecide finds a modulo schedule of Unroll micro-batches per period
// that decides, per instance of the repetend, whether to keep or offload
// each activation (placement's "Memory as a decision"). Iterative modulo
// scheduling (Rau, MICRO 1994; see Modulo) places the blocks of the
// Unroll copies at period P; then every device, in turn, takes the set of
// its instances to offload that fits its budget with the fewest moves
// (every set when the device has at most decideExhaustive instances that
// may be offloaded, else the longest-lived first), each offload placed on
// the device's host channel, modulo P, at its first free time after its
// forward ends and its reload at its last free time that ends before the
// consumer starts. A device's memory is that of the steady state modulo
// P: an activation counts from its forward's start until its offload
// ends, and again from its reload's start until the blocks that free it.
// Periods are tried upward from the device load bound; at the first where
// some placement fits, the one whose repetend ends soonest wins, then the
// one with least memory; where none does, the slots of the first
// placement are annealed (anneal) toward one that fits. ctx is checked
// between periods.
func ModuloDecide(ctx context.Context, p *placement.Placement, opt DecideOptions) (*Decided, error) {
	if err := checkArgs(p, 1, opt.Memory); err != nil {
		return nil, err
	}
	if !decideOK(p) {
		return nil, fmt.Errorf("construct: placement %q: modulo decisions need blocks on one device each, links without channels and a block that may be offloaded", p.Name)
	}
	u := max(1, opt.Unroll)
	st := newDecideState(p, u)
	lo := 1
	for _, l := range st.load {
		lo = max(lo, l)
	}
	lo = max(lo, opt.MinPeriod)
	periods := opt.MaxPeriods
	if periods <= 0 {
		periods = 4 * u
	}
	restarts := opt.Restarts
	if restarts <= 0 {
		restarts = 200
	}
	for P := lo; P < lo+periods; P++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if dp := st.try(P, restarts, opt.Memory); dp != nil {
			return dp, nil
		}
		if starts := st.place(P, 0); starts != nil && p.Limited(opt.Memory) {
			if dp, _ := st.anneal(ctx, P, starts, opt.Memory, decideAnneal); dp != nil {
				return dp, nil
			}
		}
	}
	return nil, fmt.Errorf("construct: placement %q: no modulo schedule of %d micro-batches with decisions and period below %d fits memory %d", p.Name, u, lo+periods, opt.Memory)
}

// decideSpread and decideSkip vary how much restarts perturb the
// priorities (a bonus below spread·P on 4·height) and the free times
// taken (passed over with a chance below 50+skip per mille).
var decideSpread, decideSkip = []int{1, 2, 4, 1, 3}, []int{100, 300, 300, 200, 50, 150, 250}

// decideExhaustive is the most instances of one device whose every
// subset is tried as the set to offload.
const decideExhaustive = 8

// decideState is what every period and restart of ModuloDecide shares:
// the operations are the blocks of u copies (operation c·K+i).
type decideState struct {
	p         *placement.Placement
	u, k      int
	dev       []int // device of each operation
	time      []int
	height    []int
	preds     [][]opDep
	succs     [][]opDep
	load      []int   // per device, u micro-batches
	on        [][]int // operations per device
	consumer  []int   // per operation: the operation of its consumer, or -1 (not offloadable)
	freed     []int   // per operation: memory an offload frees
	move      []int   // per operation: offload time
	channelOf []int   // per device
	// ownSwitches: no two devices share a host channel, so each device
	// decides alone and memo keeps its choices by the times of its
	// operations (relative to the earliest), for period memoP and budget
	// memoMemory.
	ownSwitches       bool
	memo              []map[string]memoEntry
	memoP, memoMemory int
}

// memoEntry is one device's choice: for its operations ops that may be
// offloaded, the offload and reload times relative to the device's
// earliest start (−1: kept), its peak and its memory over the budget.
type memoEntry struct {
	ops        []int
	off, rel   []int
	peak, area int
}

// decideMemo is how many choices memo keeps per device before it starts
// afresh.
const decideMemo = 1 << 15

func newDecideState(p *placement.Placement, u int) *decideState {
	k := len(p.Blocks)
	n := u * k
	st := &decideState{p: p, u: u, k: k, dev: make([]int, n), time: make([]int, n), height: make([]int, n),
		preds: make([][]opDep, n), succs: make([][]opDep, n), load: make([]int, p.Devices), on: make([][]int, p.Devices),
		consumer: make([]int, n), freed: make([]int, n), move: make([]int, n), channelOf: make([]int, p.Devices)}
	tails := p.Tails()
	cons := p.Consumers()
	seen := map[int]bool{}
	st.ownSwitches = true
	for d := range p.Devices {
		st.channelOf[d] = p.HostChannel(d)
		st.ownSwitches = st.ownSwitches && !seen[st.channelOf[d]]
		seen[st.channelOf[d]] = true
	}
	for c := range u {
		for i, b := range p.Blocks {
			x := c*k + i
			st.dev[x], st.time[x], st.height[x] = b.Devices[0], b.Time, tails[i]+b.Time
			st.load[b.Devices[0]] += b.Time
			st.on[b.Devices[0]] = append(st.on[b.Devices[0]], x)
			st.consumer[x] = -1
			if p.Offloadable(i, cons) {
				st.consumer[x] = c*k + cons[i]
				st.freed[x] = p.Freed(i, placement.Offload)
				st.move[x] = p.OffloadTime(i)
			}
		}
		for _, d := range p.Deps {
			from, to := c*k+d.From, c*k+d.To
			st.preds[to] = append(st.preds[to], opDep{from, p.Delay(d)})
			st.succs[from] = append(st.succs[from], opDep{to, p.Delay(d)})
		}
	}
	return st
}

// try returns the best placement at period P that fits the budget, or
// nil.
func (st *decideState) try(P, restarts, memory int) *Decided {
	var best *Decided
	bestLat, bestMem := 0, 0
	seen := map[string]bool{}
	for r := range restarts {
		starts := st.place(P, r)
		if starts == nil {
			continue
		}
		key := fmt.Sprint(starts)
		if seen[key] {
			continue
		}
		seen[key] = true
		lat := 0
		for x, s := range starts {
			lat = max(lat, s+st.time[x])
		}
		if best != nil && lat > bestLat {
			continue
		}
		dp, total, ok := st.decide(P, starts, memory)
		if !ok {
			continue
		}
		if best != nil && lat == bestLat && total >= bestMem {
			continue
		}
		best, bestLat, bestMem = dp, lat, total
	}
	return best
}

// place is imsRestart over the operations of u copies: restart 0 places
// them in order of height at their first free time, later restarts
// perturb the order and the choice of times.
func (st *decideState) place(P, restart int) []int {
	n := len(st.dev)
	for _, t := range st.time {
		if t > P {
			return nil
		}
	}
	rng := newRand(uint64(restart))
	order, skip := imsOrder(st.height, P, restart, imsDraw{decideSpread[restart%len(decideSpread)], 50, decideSkip[restart%len(decideSkip)]}, rng)
	return imsPlace(imsJob{
		P: P, order: order, skip: skip, rng: rng, pre: st.preds, suc: st.succs,
		resources: st.p.Devices, budget: 8 * n * max(4, st.p.Devices),
		slots: func(i, t int, f func(r, slot int) bool) {
			for v := t; v < t+st.time[i]; v++ {
				if !f(st.dev[i], v%P) {
					return
				}
			}
		},
	})
}

// decide chooses, device by device, where the blocks that nothing
// depends on (the weight blocks) run among the slots they hold modulo P
// (every assignment of those slots when a device has at most
// decidePermute of them), the instances to offload, and the times of
// their moves on the host channels modulo P. Per device the choice that
// fits the budget with the fewest moves wins, then the least peak, then
// the earliest end. ok reports whether every device fits its budget;
// total is the sum of the devices' peaks.
func (st *decideState) decide(P int, given []int, memory int) (dp *Decided, total int, ok bool) {
	return st.decideWith(P, given, memory, true)
}

// decideWith is decide; permute false keeps the weight blocks where they
// are.
func (st *decideState) decideWith(P int, given []int, memory int, permute bool) (dp *Decided, total int, ok bool) {
	n := len(given)
	starts := slices.Clone(given)
	dp = &Decided{Unroll: st.u, Period: P, Starts: starts, Offload: slices.Repeat([]int{-1}, n), Reload: slices.Repeat([]int{-1}, n)}
	chans := map[int][]bool{}
	ok = true
	memo := !permute && st.ownSwitches
	if memo && (st.memo == nil || st.memoP != P || st.memoMemory != memory) {
		st.memo, st.memoP, st.memoMemory = make([]map[string]memoEntry, len(st.on)), P, memory
	}
	for d, ops := range st.on {
		ch := st.channelOf[d]
		if chans[ch] == nil {
			chans[ch] = make([]bool, P)
		}
		budget := st.p.Budget(d, memory)
		var key string
		base := starts[ops[0]] // the device's earliest start: moves come later
		for _, x := range ops {
			base = min(base, starts[x])
		}
		if memo {
			key = memoKey(ops, starts, base)
			if e, hit := st.memo[d][key]; hit {
				peak, area := e.apply(dp, base)
				total += peak
				if budget > 0 && peak > budget {
					ok = false
					dp.excess += area
				}
				continue
			}
		}
		best := st.choose(deviceTurn{P: P, ops: ops, starts: starts, budget: budget, row: chans[ch], permute: permute})
		if best == nil {
			return nil, 0, false
		}
		for j, x := range best.free {
			starts[x] = best.times[j]
		}
		chans[ch] = best.row
		for _, x := range best.cand {
			dp.Offload[x], dp.Reload[x] = best.off[x], best.rel[x]
		}
		total += best.peak
		if budget > 0 && best.peak > budget {
			ok = false
			dp.excess += best.area
		}
		if memo {
			st.remember(d, key, base, best)
		}
	}
	return dp, total, ok
}

// memoKey is the key of memo for a device's operations ops at starts:
// their times relative to base. A device's choice depends only on the
// times of its own operations, and shifting them all shifts the choice.
func memoKey(ops, starts []int, base int) string {
	b := make([]byte, 0, 4*len(ops))
	for _, x := range ops {
		v := uint32(starts[x] - base)
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return string(b)
}

// apply writes e's moves, shifted by base, into dp; it returns e's peak
// and memory over the budget.
func (e memoEntry) apply(dp *Decided, base int) (peak, area int) {
	for j, x := range e.ops {
		if e.off[j] >= 0 {
			dp.Offload[x], dp.Reload[x] = e.off[j]+base, e.rel[j]+base
		}
	}
	return e.peak, e.area
}

// remember keeps device d's choice c under key, its moves relative to
// base.
func (st *decideState) remember(d int, key string, base int, c *deviceChoice) {
	e := memoEntry{ops: c.cand, peak: c.peak, area: c.area, off: make([]int, len(c.cand)), rel: make([]int, len(c.cand))}
	for j, x := range c.cand {
		e.off[j], e.rel[j] = -1, -1
		if c.off[x] >= 0 {
			e.off[j], e.rel[j] = c.off[x]-base, c.rel[x]-base
		}
	}
	if st.memo[d] == nil || len(st.memo[d]) >= decideMemo {
		st.memo[d] = map[string]memoEntry{}
	}
	st.memo[d][key] = e
}

// deviceTurn is one device's turn in decideWith: its operations ops at
// period P, the starts so far (its weight blocks' are moved), its
// budget, its host channel's slots taken so far (row, modulo P) and
// whether every assignment of its weight blocks' slots is tried.
type deviceTurn struct {
	P       int
	ops     []int
	starts  []int
	budget  int
	row     []bool
	permute bool
}

// deviceChoice is a device's choice: its operations that may be
// offloaded (cand) and those nothing depends on (free, the weight
// blocks), the times of free, the moves of cand by operation (off, rel;
// −1: kept), the host channel's slots then, its peak, memory over the
// budget, number of moves and end.
type deviceChoice struct {
	peak, area, moves, end int
	cand, free             []int
	times                  []int
	off, rel               []int
	row                    []bool
}

// better reports whether c beats best under budget: the choice that
// fits wins, then, among those over, the least area, then peak; among
// those that fit, the fewest moves, the least peak, the earliest end.
func better(c, best *deviceChoice, budget int) bool {
	if best == nil {
		return true
	}
	fa, fb := budget <= 0 || c.peak <= budget, budget <= 0 || best.peak <= budget
	if fa != fb {
		return fa
	}
	if !fa {
		if c.area != best.area {
			return c.area < best.area
		}
		return c.peak < best.peak
	}
	if c.moves != best.moves {
		return c.moves < best.moves
	}
	if c.peak != best.peak {
		return c.peak < best.peak
	}
	return c.end < best.end
}

// choose is the best choice of one device's turn (see decide), nil
// where none places its moves. It leaves t.starts with the weight
// blocks at the last assignment tried; the caller sets the choice's.
func (st *decideState) choose(t deviceTurn) *deviceChoice {
	P, starts := t.P, t.starts
	var cand, free []int
	for _, x := range t.ops {
		if st.consumer[x] >= 0 {
			cand = append(cand, x)
		}
		if len(st.succs[x]) == 0 && st.time[x] == 1 {
			free = append(free, x)
		}
	}
	sets := subsets(len(cand))
	var assigns [][]int
	if t.permute && len(free) <= decidePermute {
		assigns = permutations(len(free))
	} else {
		assigns = [][]int{identity(len(free))}
	}
	slots := make([]int, len(free))
	for j, x := range free {
		slots[j] = starts[x] % P
	}
	var best *deviceChoice
	for _, as := range assigns {
		// free[j] takes slot slots[as[j]], at its first such time
		// after its predecessors.
		times := make([]int, len(free))
		end := 0
		for j, x := range free {
			est := 0
			for _, dd := range st.preds[x] {
				est = max(est, starts[dd.op]+dd.lag)
			}
			s := slots[as[j]]
			tm := est + ((s-est)%P+P)%P
			times[j] = tm
			end = max(end, tm+st.time[x])
		}
		for j, x := range free {
			starts[x] = times[j]
		}
		// Longest-lived first: they get the earliest offloads and
		// the latest reloads.
		life := func(x int) int { return starts[st.consumer[x]] - starts[x] }
		order := slices.Clone(cand)
		sort.SliceStable(order, func(a, b int) bool { return life(order[a]) > life(order[b]) })
		for _, set := range sets {
			moves := bits.OnesCount64(set)
			if best != nil && (t.budget <= 0 || best.peak <= t.budget) && (moves > best.moves) {
				break
			}
			row := slices.Clone(t.row)
			mv, placedAll := st.placeMoves(row, P, order, set, starts)
			if !placedAll {
				continue
			}
			c := &deviceChoice{moves: moves, end: end}
			c.peak, c.area = st.peak(P, t.ops, starts, mv, t.budget)
			if better(c, best, t.budget) {
				c.cand, c.free = cand, free
				c.times, c.row = slices.Clone(times), row
				c.off, c.rel = make([]int, len(starts)), make([]int, len(starts))
				for j, x := range order {
					c.off[x], c.rel[x] = mv.off[j], mv.rel[j]
				}
				best = c
			}
			if t.budget <= 0 {
				break
			}
		}
	}
	return best
}

// placeMoves places on row the moves of the operations of order that
// set names (bit j: order[j]), in order (moves); ok is false where one
// finds no slots.
func (st *decideState) placeMoves(row []bool, P int, order []int, set uint64, starts []int) (mv deviceMoves, ok bool) {
	mv = deviceMoves{cand: order, off: make([]int, len(order)), rel: make([]int, len(order))}
	for j, x := range order {
		mv.off[j], mv.rel[j] = -1, -1
		if set&(1<<j) == 0 {
			continue
		}
		o, r := st.moves(row, P, x, starts)
		if o < 0 {
			return mv, false
		}
		mv.off[j], mv.rel[j] = o, r
	}
	return mv, true
}

// deviceMoves are the offload ends and reload starts (off, rel; −1:
// kept) of a device's operations that may be offloaded (cand), by index
// in cand.
type deviceMoves struct {
	cand, off, rel []int
}

// decidePermute is the most weight blocks of one device whose every
// assignment of slots decide tries.
const decidePermute = 4

// subsets are the subsets of n elements as bit sets, fewest elements
// first (n ≤ decideExhaustive), or the n+1 prefixes when n is larger.
func subsets(n int) []uint64 {
	var out []uint64
	if n > decideExhaustive {
		for j := 0; j <= n; j++ {
			out = append(out, uint64(1)<<j-1)
		}
		return out
	}
	for m := range uint64(1) << n {
		out = append(out, m)
	}
	slices.SortStableFunc(out, func(a, b uint64) int { return bits.OnesCount64(a) - bits.OnesCount64(b) })
	return out
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// permutations lists every permutation of 0..n-1, the identity first.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, q := range permutations(n - 1) {
		for pos := len(q); pos >= 0; pos-- {
			r := make([]int, 0, n)
			r = append(r, q[:pos]...)
			r = append(r, n-1)
			r = append(r, q[pos:]...)
			out = append(out, r)
		}
	}
	return out
}

// moves places the offload of operation x at its first free time on row
// after its forward ends and the reload at the last free time that ends
// before its consumer starts, marking row; -1, -1 when they do not fit.
func (st *decideState) moves(row []bool, P, x int, starts []int) (off, rel int) {
	t := st.move[x]
	if t > P {
		return -1, -1
	}
	free := func(a int) bool {
		for v := a; v < a+t; v++ {
			if row[v%P] {
				return false
			}
		}
		return true
	}
	mark := func(a int) {
		for v := a; v < a+t; v++ {
			row[v%P] = true
		}
	}
	end, use := starts[x]+st.time[x], starts[st.consumer[x]]
	off = -1
	for a := end; a+2*t <= use && a < end+P; a++ {
		if free(a) {
			off = a
			break
		}
	}
	if off < 0 {
		return -1, -1
	}
	mark(off)
	rel = -1
	for a := use - t; a >= off+t && a > use-t-P; a-- {
		if free(a) {
			rel = a
			break
		}
	}
	if rel < 0 {
		for v := off; v < off+t; v++ {
			row[v%P] = false
		}
		return -1, -1
	}
	mark(rel)
	return off, rel
}

// peak is a device's highest memory in the steady state modulo P: every
// change (a block's start, an offload's end, a reload's start) at time a
// has happened ⌊(τ−a)/P⌋+1 times by τ. At one time the frees come first
// and the returns last, and a device starts one block at a time, so the
// highest running sum is after all changes of some time. area is the
// memory over budget (> 0) summed over the times of one period.
func (st *decideState) peak(P int, ops, starts []int, mv deviceMoves, budget int) (peak, area int) {
	cand, off, rel := mv.cand, mv.off, mv.rel
	type ev struct{ t, delta int }
	var evs []ev
	top := 0
	for _, x := range ops {
		if m := st.p.Blocks[x%st.k].Memory; m != 0 {
			evs = append(evs, ev{starts[x], m})
		}
		top = max(top, starts[x])
	}
	for j, x := range cand {
		if off[j] < 0 {
			continue
		}
		evs = append(evs, ev{off[j] + st.move[x], -st.freed[x]}, ev{rel[j], st.freed[x]})
		top = max(top, off[j]+st.move[x], rel[j])
	}
	T := (top/P + 1) * P
	base := 0
	diff := make([]int, P+1)
	for _, e := range evs {
		a := T - e.t
		base += e.delta * (a/P + 1)
		if r := a % P; r != 0 {
			diff[P-r] += e.delta
		}
	}
	sum := base
	for s := range P {
		sum += diff[s]
		peak = max(peak, sum)
		if budget > 0 && sum > budget {
			area += sum - budget
		}
	}
	return peak, area
}

// Schedule unrolls n micro-batches of the modulo schedule with its
// decisions, compacts them where the verifier's rules allow
// (compact.Compact) and verifies the result under the budget.
func (dp *Decided) Schedule(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	if err := checkArgs(p, n, memory); err != nil {
		return nil, err
	}
	k := len(p.Blocks)
	if len(dp.Starts) != dp.Unroll*k || dp.Period < 1 {
		return nil, fmt.Errorf("construct: modulo schedule of %d operations for placement %q of %d blocks", len(dp.Starts), p.Name, k)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}}
	for m := range n {
		c, j := m%dp.Unroll, m/dp.Unroll
		for i := range k {
			x := c*k + i
			s.Instances = append(s.Instances, schedule.Instance{Block: i, Micro: m, Start: dp.Starts[x] + j*dp.Period})
			if dp.Offload[x] >= 0 {
				s.Decisions = append(s.Decisions, schedule.Decision{Block: i, Micro: m, Action: placement.Offload,
					Start: dp.Offload[x] + j*dp.Period, Reload: dp.Reload[x] + j*dp.Period})
			}
		}
	}
	s.Sort()
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("construct: placement %q: modulo schedule with decisions fails verification: %w", p.Name, err)
	}
	if c, err := compact.Compact(s.Spec, compact.Keep{From: s}); err == nil && schedule.Makespan(c) < schedule.Makespan(s) {
		return c, nil
	}
	return s, nil
}

// slotState is a modulo schedule at period P given by the slot (start
// modulo P) of every operation: each runs at its first time with its slot
// after its predecessors (asap), so any assignment of slots that keeps the
// devices' slots apart is a schedule. The local search of anneal swaps
// the slots of two operations of equal time on one device, or moves one
// into free slots.
type slotState struct {
	st    *decideState
	P     int
	slot  []int
	topo  []int
	owner [][]int // per device and slot: the operation there, or -1
}

func newSlotState(st *decideState, P int, starts []int) *slotState {
	n := len(starts)
	ss := &slotState{st: st, P: P, slot: make([]int, n), owner: make([][]int, st.p.Devices)}
	for d := range ss.owner {
		ss.owner[d] = slices.Repeat([]int{-1}, P)
	}
	for x, s := range starts {
		ss.slot[x] = s % P
		for v := s; v < s+st.time[x]; v++ {
			ss.owner[st.dev[x]][v%P] = x
		}
	}
	// Operations in order of their starts: a topological order, as every
	// lag is positive.
	ss.topo = identity(n)
	sort.SliceStable(ss.topo, func(a, b int) bool { return starts[ss.topo[a]] < starts[ss.topo[b]] })
	return ss
}

// asap returns the starts of the slot assignment, the earliest 0.
func (ss *slotState) asap() []int {
	st, P := ss.st, ss.P
	out := make([]int, len(ss.slot))
	for _, x := range ss.topo {
		est := 0
		for _, d := range st.preds[x] {
			est = max(est, out[d.op]+d.lag)
		}
		out[x] = est + ((ss.slot[x]-est)%P+P)%P
	}
	lo := slices.Min(out)
	for x := range out {
		out[x] -= lo
	}
	return out
}

// fitsSlot reports whether operation x may take slot s on its device,
// ignoring the slots held by the operations in skip.
func (ss *slotState) fitsSlot(x, s int, skip ...int) bool {
	row := ss.owner[ss.st.dev[x]]
	for v := s; v < s+ss.st.time[x]; v++ {
		if o := row[v%ss.P]; o >= 0 && !slices.Contains(skip, o) {
			return false
		}
	}
	return true
}

func (ss *slotState) set(x, s int) {
	ss.unset(x)
	ss.slot[x] = s
	row := ss.owner[ss.st.dev[x]]
	for v := s; v < s+ss.st.time[x]; v++ {
		row[v%ss.P] = x
	}
}

func (ss *slotState) unset(x int) {
	row := ss.owner[ss.st.dev[x]]
	if ss.slot[x] < 0 {
		return
	}
	for v := ss.slot[x]; v < ss.slot[x]+ss.st.time[x]; v++ {
		if row[v%ss.P] == x {
			row[v%ss.P] = -1
		}
	}
	ss.slot[x] = -1
}

// annealCost weighs a decided schedule: the memory over the budgets
// first, then the time one repetend takes, in units of 1/K of a time
// unit for K operations, the sum of the starts (ties broken toward
// earlier blocks).
func (st *decideState) annealCost(P int, starts []int, memory, weight int) (cost int, dp *Decided, ok bool) {
	dp, _, ok = st.decideWith(P, starts, memory, false)
	if dp == nil {
		return 1 << 40, nil, false
	}
	lat, sum := 0, 0
	for x, s := range dp.Starts {
		lat = max(lat, s+st.time[x])
		sum += s
	}
	return (dp.excess*weight+lat)*len(dp.Starts) + sum, dp, ok
}

// anneal searches slot assignments at period P from starts for one that
// fits the budget with the shortest repetend: iters steps of simulated
// annealing with a deterministic generator (integer acceptance, so every
// platform gives the same answer). It returns the best that fits (nil
// when none does) and the best of all, which may exceed the budget.
func (st *decideState) anneal(ctx context.Context, P int, starts []int, memory int, a annealing) (fit, best *Decided) {
	var fitCost, bestCost int
	keep := func(cost int, dp *Decided, ok bool) {
		if ok && (fit == nil || cost < fitCost) {
			fit, fitCost = dp, cost
		}
		if best == nil || cost < bestCost {
			best, bestCost = dp, cost
		}
	}
	rng := newRand(a.Seed)
	st.walk(ctx, newSlotState(st, P, starts), walking{memory: memory, a: a, rng: rng, hot: 48, keep: keep})
	if fit != nil {
		// Then shorten the repetend among the placements that fit.
		polish := a
		polish.Iters, polish.Slack = a.Polish, 0
		st.walk(ctx, newSlotState(st, P, fit.Starts), walking{memory: memory, a: polish, rng: rng, hot: 8, fitOnly: true, keep: keep})
	}
	return fit, best
}

// walk is one run of simulated annealing from ss: a step swaps the slots
// of two operations of equal time on one device (or moves one into free
// slots) and is taken when it costs no more, or else with a chance that
// falls with how much more it costs and with the temperature (from
// hot+1 down to 1); with fitOnly, only steps to placements that fit are
// taken. keep sees every placement taken.
func (st *decideState) walk(ctx context.Context, ss *slotState, w walking) {
	memory, a, rng, hot, fitOnly, keep := w.memory, w.a, w.rng, w.hot, w.fitOnly, w.keep
	P := ss.P
	cur := ss.asap()
	curCost, dp, ok := st.annealCost(P, cur, memory, a.Weight)
	if dp == nil {
		return
	}
	keep(curCost, dp, ok)
	n, iters := len(ss.slot), a.Iters
	// The repetend may grow by Slack periods: beyond, a placement waits
	// more than memory needs.
	cap := -1
	if a.Slack > 0 {
		cap = (latency(st, dp.Starts) + a.Slack*P) * n
	}
	for it := range iters {
		if it%1024 == 0 && ctx.Err() != nil {
			break
		}
		temp := 1 + hot*(iters-it)/iters
		x := rng.intn(n)
		d := st.dev[x]
		old := ss.slot[x]
		// A swap with an operation of equal time, or a move to free
		// slots: half of the steps aim at the slot where x would wait
		// for nothing.
		s := rng.intn(P)
		if rng.intn(2) == 0 {
			est := 0
			for _, dd := range st.preds[x] {
				est = max(est, cur[dd.op]+dd.lag)
			}
			s = est % P
		}
		y := ss.owner[d][s]
		if y == x {
			continue
		}
		if y >= 0 {
			if st.time[y] != st.time[x] {
				continue
			}
			s = ss.slot[y]
			ss.unset(x)
			ss.unset(y)
			if !ss.fitsSlot(x, s) || !ss.fitsSlot(y, old) {
				ss.set(x, old)
				ss.set(y, s)
				continue
			}
			ss.set(x, s)
			ss.set(y, old)
		} else {
			if !ss.fitsSlot(x, s, x) {
				continue
			}
			ss.set(x, s)
		}
		next := ss.asap()
		cost, dp, fit := st.annealCost(P, next, memory, a.Weight)
		delta := cost - curCost
		if dp != nil && (fit || !fitOnly) && (cap < 0 || cost-dp.excess*a.Weight*n < cap) && (delta <= 0 || rng.intn(delta*4+temp*n) < temp*n) {
			cur, curCost = next, cost
			keep(cost, dp, fit)
			continue
		}
		// Undo.
		if y >= 0 {
			ss.unset(x)
			ss.unset(y)
			ss.set(x, old)
			ss.set(y, s)
		} else {
			ss.set(x, old)
		}
	}
}

// walking is one walk of anneal: the budget, the run, its generator, the
// starting temperature (hot), whether only placements that fit are
// taken, and what sees every placement taken.
type walking struct {
	memory  int
	a       annealing
	rng     *rand
	hot     int
	fitOnly bool
	keep    func(int, *Decided, bool)
}

// annealing is one run of anneal: Iters steps from generator seed Seed,
// one unit of memory over a budget for one unit of time costing Weight
// units of the repetend's length.
type annealing struct {
	Iters, Weight, Slack, Polish int
	Seed                         uint64
}

// latency is when the last operation of starts ends.
func latency(st *decideState, starts []int) int {
	lat := 0
	for x, s := range starts {
		lat = max(lat, s+st.time[x])
	}
	return lat
}

// decideShape is a repetend decideFollow anneals: Unroll micro-batches
// at the device load bound of Unroll micro-batches plus Extra, from
// iterative modulo scheduling's first placement of the Unroll copies, or
// with Dilate from that of one micro-batch at its load bound repeated
// Unroll times, one load bound apart, with every time stretched to the
// period (dilated; a collision of slots falls back to the first).
type decideShape struct {
	Unroll, Extra int
	Dilate        bool
	annealing
}

// decideShapes are the repetends decideFollow anneals. The annealing's
// results are chaotic in its parameters; these are the ones that did
// best on the split V placement of 8 devices at memory 4 (two repetends
// of 2 micro-batches at period 13, one whose unrolled schedule of 64
// micro-batches ends soonest, one whose followers of 16 do), with one of
// 1 micro-batch, cheap, for the followers.
var decideShapes = []decideShape{
	{1, 0, false, annealing{5000, 64, 0, 5000, 1}},
	{2, 1, true, annealing{20000, 128, 4, 20000, 1}},
	{2, 1, true, annealing{20000, 128, 8, 20000, 1}},
}

// start is where the annealing of shape sh at period P starts.
func (sh decideShape) start(p *placement.Placement, st *decideState, P int) []int {
	if !sh.Dilate || sh.Unroll == 1 {
		return st.place(P, 0)
	}
	one := newDecideState(p, 1)
	lo := slices.Max(one.load)
	first := one.place(lo, 0)
	if first == nil {
		return st.place(P, 0)
	}
	k := len(p.Blocks)
	out := make([]int, sh.Unroll*k)
	used := map[[2]int]bool{}
	for c := range sh.Unroll {
		for i := range k {
			t := (first[i] + c*lo) * P / (sh.Unroll * lo)
			for v := t; v < t+st.time[i]; v++ {
				slot := [2]int{st.dev[i], v % P}
				if used[slot] {
					return st.place(P, 0)
				}
				used[slot] = true
			}
			out[c*k+i] = t
		}
	}
	return out
}

// decideAnneal is the annealing ModuloDecide runs where iterative modulo
// scheduling finds nothing that fits.
var decideAnneal = annealing{5000, 64, 0, 5000, 1}

// decideFollow anneals, for every shape of decideShapes, a modulo schedule
// with decisions under the budget (anneal). One that fits is unrolled to n
// micro-batches ("modulo/decide u=U period P"); the best, fitting or not,
// is followed (ListOptions.Priority) by a list schedule of every policy
// of pols and lifePolicies, which take their own decisions where the
// budget binds ("modulo/decide u=U period P/<savings>"). Those that
// verify are returned.
func decideFollow(ctx context.Context, p *placement.Placement, n, memory int, pols []Savings) []Entry {
	if memory <= 0 || len(pols) == 0 || !decideOK(p) {
		return nil
	}
	k := len(p.Blocks)
	var out []Entry
	for _, sh := range decideShapes {
		if ctx.Err() != nil {
			break
		}
		st := newDecideState(p, sh.Unroll)
		P := slices.Max(st.load) + sh.Extra
		starts := sh.start(p, st, P)
		if starts == nil {
			continue
		}
		fit, best := st.anneal(ctx, P, starts, memory, sh.annealing)
		name := fmt.Sprintf("modulo/decide u=%d period %d", sh.Unroll, P)
		if fit != nil {
			if s, err := fit.Schedule(spec.Spec{Placement: p, MicroBatches: n, Memory: memory}); err == nil {
				out = append(out, Entry{Name: name, Schedule: s, Makespan: schedule.Makespan(s), build: func(_ context.Context, n int) (*schedule.Schedule, error) {
					return fit.Schedule(spec.Spec{Placement: p, MicroBatches: n, Memory: memory})
				}})
			}
		}
		if best == nil {
			continue
		}
		prio := func(n int) []int {
			prio := make([]int, n*k)
			for m := range n {
				c, j := m%sh.Unroll, m/sh.Unroll
				for i := range k {
					prio[m*k+i] = best.Starts[c*k+i] + j*P
				}
			}
			return prio
		}
		pr := prio(n)
		for _, sv := range append(slices.Clone(pols), lifePolicies(p, pols)...) {
			s, err := List(p, n, ListOptions{Memory: memory, Priority: pr, Savings: sv})
			if err != nil {
				continue
			}
			out = append(out, Entry{Name: name + "/" + sv.String(), Schedule: s, Makespan: schedule.Makespan(s), build: func(_ context.Context, n int) (*schedule.Schedule, error) {
				return List(p, n, ListOptions{Memory: memory, Priority: prio(n), Savings: sv})
			}})
		}
	}
	return out
}
