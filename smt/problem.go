package smt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/z3"
)

// Task is one thing to place in time: it occupies every device of Devices
// for Time units from its start, and adds Memory on each of them.
type Task struct {
	Name    string
	Devices []int
	Time    int
	Memory  int
	Release int // earliest start
}

// Prec is the precedence s_From + t_From ≤ s_To + Lag + Periods·P, P being
// the period of a periodic problem (Periods must be 0 otherwise).
type Prec struct {
	From, To     int
	Lag, Periods int
}

// Transfer is a tensor that crosses a link, a resource of its own that
// carries one transfer at a time (Problem.Transfers): it starts no earlier
// than task From ends, takes Time on link Link, and task To may start once
// it has ended — so it implies the precedence From → To with Lag −Time.
// The transfers of one link run in the order their producers run (first
// in, first out): those of two tasks a and b in the order of a and b,
// those of one task in the order the Problem lists them. All producers of
// one link share a device, whose order is then the order of the link.
//
// This is the placement's link rule (placement.LinkQueue) in the terms of
// a Problem; InstanceProblem fills it from the placement (Links,
// Transfer), and transferEnds below is its one reading for given starts.
//
// Release is the earliest start of the transfer: when the link is done
// with transfers outside the Problem that run before all of its own (the
// fixed part of a refine window).
type Transfer struct {
	From, To int // producer and consumer task
	Link     int // any label: transfers with equal labels share the link
	Time     int
	Release  int
}

// Problem is "schedule these tasks on D devices under memory M".
type Problem struct {
	Devices int
	Tasks   []Task
	Precs   []Prec
	// Before lists pairs (a, b) where a may be assumed to end before b
	// starts without losing any schedule's makespan: the symmetry breaking
	// of the Tessel paper's property 4.1 (same block, micro-batches in
	// order). The encoder asserts them.
	Before [][2]int
	Memory int   // per-device budget; 0 means unlimited
	Entry  []int // memory on each device before the first task; nil means 0
	// Transfers, when links are resources (links that carry one
	// transfer at a time); nil
	// otherwise, and then a problem is exactly what it was before links.
	Transfers []Transfer
	// FreeLinkOrder lets the transfers of one link run in any order, not
	// their producers' (She et al., operator-level MIP, §III eqs 14–15:
	// one order Boolean per two transfers of a link). A solution then
	// records every transfer's start (Solution.TransferStarts), from which
	// the schedule's recorded link order is read (LinkOrders). Every
	// schedule of the producer-order rule is one of these, so the optimum
	// is no worse.
	FreeLinkOrder bool
	// Deadlines are the latency rule's pairs (placement's "Latency"):
	// nil without a latency budget. See Deadline.
	Deadlines []Deadline
}

// Validate reports a malformed problem (a caller's bug, not a user's).
func (p *Problem) Validate() error {
	n := len(p.Tasks)
	for i, t := range p.Tasks {
		if t.Time < 1 {
			return fmt.Errorf("smt: task %d (%s): time %d < 1", i, t.Name, t.Time)
		}
		if len(t.Devices) == 0 {
			return fmt.Errorf("smt: task %d (%s): no device", i, t.Name)
		}
		for _, d := range t.Devices {
			if d < 0 || d >= p.Devices {
				return fmt.Errorf("smt: task %d (%s): device %d out of range", i, t.Name, d)
			}
		}
	}
	for _, pr := range p.Precs {
		if pr.From < 0 || pr.From >= n || pr.To < 0 || pr.To >= n {
			return fmt.Errorf("smt: precedence %d -> %d out of range", pr.From, pr.To)
		}
	}
	for _, b := range p.Before {
		if b[0] < 0 || b[0] >= n || b[1] < 0 || b[1] >= n || b[0] == b[1] {
			return fmt.Errorf("smt: order %d before %d out of range", b[0], b[1])
		}
	}
	for _, dl := range p.Deadlines {
		if dl.From < Origin || dl.From >= n || dl.To < 0 || dl.To >= n || dl.From == Origin && dl.Periods != 0 {
			return fmt.Errorf("smt: deadline %d -> %d out of range", dl.From, dl.To)
		}
	}
	if p.Entry != nil && len(p.Entry) != p.Devices {
		return fmt.Errorf("smt: entry memory for %d devices, want %d", len(p.Entry), p.Devices)
	}
	for k, tr := range p.Transfers {
		if tr.From < 0 || tr.From >= n || tr.To < 0 || tr.To >= n || tr.From == tr.To {
			return fmt.Errorf("smt: transfer %d (%d -> %d) out of range", k, tr.From, tr.To)
		}
		if tr.Time < 1 {
			return fmt.Errorf("smt: transfer %d (%d -> %d): time %d < 1", k, tr.From, tr.To, tr.Time)
		}
	}
	for _, ks := range p.links() {
		for i, k := range ks {
			for _, l := range ks[i+1:] {
				a, b := p.Transfers[k].From, p.Transfers[l].From
				if a != b && !p.shares(a, b) {
					return fmt.Errorf("smt: transfers %d and %d share link %d but their producers %d (%s) and %d (%s) share no device",
						k, l, p.Transfers[k].Link, a, p.Tasks[a].Name, b, p.Tasks[b].Name)
				}
			}
		}
	}
	return nil
}

// links groups the transfers by link: the indices of each link's
// transfers in list order, the links in order of first appearance.
func (p *Problem) links() [][]int {
	if len(p.Transfers) == 0 {
		return nil
	}
	at := map[int]int{}
	var out [][]int
	for k, tr := range p.Transfers {
		g, ok := at[tr.Link]
		if !ok {
			g = len(out)
			at[tr.Link] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], k)
	}
	return out
}

// allPrecs is Precs and the precedences the transfers imply (From → To,
// Lag −Time); Precs itself when there is no transfer.
func (p *Problem) allPrecs() []Prec {
	if len(p.Transfers) == 0 {
		return p.Precs
	}
	out := slices.Clip(p.Precs)
	for _, tr := range p.Transfers {
		out = append(out, Prec{From: tr.From, To: tr.To, Lag: -tr.Time})
	}
	return out
}

// transferEnds reads the link rule for given starts: every link takes its
// transfers in the order their producers start (ties, which only one
// producer's transfers have in a schedule without overlaps: list order),
// each from the latest of its producer's end, the link's last end and its
// release. It
// returns when each transfer ends. Any start times of the transfers that
// keep the producers' order on every link, start no earlier than their
// producers end and do not overlap end no earlier (by induction along
// each link), so a consumer that starts before its transfer's end here
// has no schedule of its transfers at all.
func (p *Problem) transferEnds(starts []int) []int {
	ends := make([]int, len(p.Transfers))
	for _, ks := range p.links() {
		ks = slices.Clone(ks)
		slices.SortStableFunc(ks, func(k, l int) int {
			return starts[p.Transfers[k].From] - starts[p.Transfers[l].From]
		})
		free := math.MinInt
		for _, k := range ks {
			tr := p.Transfers[k]
			x := max(starts[tr.From]+p.Tasks[tr.From].Time, free, tr.Release)
			free = x + tr.Time
			ends[k] = free
		}
	}
	return ends
}

func (p *Problem) entry(d int) int {
	if p.Entry == nil {
		return 0
	}
	return p.Entry[d]
}

// bitset is a fixed-size set of task indices.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(uint(i)%64)) != 0 }
func (b bitset) add(i int)      { b[i/64] |= 1 << (uint(i) % 64) }
func (b bitset) or(c bitset) {
	for k := range b {
		b[k] |= c[k]
	}
}

// knownOrder returns, for every task a, the set of tasks b that surely
// start after a ends: the transitive closure of the precedences without
// period and with Lag ≤ 0, and of Before. ok is false on a cycle.
func (p *Problem) knownOrder() (after []bitset, ok bool) {
	n := len(p.Tasks)
	succ := make([][]int, n)
	indeg := make([]int, n)
	add := func(a, b int) {
		succ[a] = append(succ[a], b)
		indeg[b]++
	}
	for _, pr := range p.allPrecs() {
		if pr.Periods == 0 && pr.Lag <= 0 {
			add(pr.From, pr.To)
		}
	}
	for _, b := range p.Before {
		add(b[0], b[1])
	}
	order := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			order = append(order, i)
		}
	}
	for k := 0; k < len(order); k++ {
		for _, s := range succ[order[k]] {
			indeg[s]--
			if indeg[s] == 0 {
				order = append(order, s)
			}
		}
	}
	if len(order) != n {
		return nil, false
	}
	after = make([]bitset, n)
	for k := n - 1; k >= 0; k-- {
		a := order[k]
		after[a] = newBitset(n)
		for _, s := range succ[a] {
			after[a].add(s)
			after[a].or(after[s])
		}
	}
	return after, true
}

// heads returns the earliest start of every task implied by releases and
// the precedences without period; tails the least time that must follow
// its end. Both assume the precedences are acyclic.
func (p *Problem) headsTails() (head, tail []int) {
	n := len(p.Tasks)
	head = make([]int, n)
	tail = make([]int, n)
	for i, t := range p.Tasks {
		head[i] = t.Release
	}
	// Bellman-Ford style relaxation; the graphs are small and acyclic, so
	// n rounds at most, usually far fewer.
	precs := p.allPrecs()
	for round := 0; round < n; round++ {
		changed := false
		for _, pr := range precs {
			if pr.Periods != 0 {
				continue
			}
			a, b := pr.From, pr.To
			if h := head[a] + p.Tasks[a].Time - pr.Lag; h > head[b] {
				head[b] = h
				changed = true
			}
			if t := tail[b] + p.Tasks[b].Time - pr.Lag; t > tail[a] {
				tail[a] = t
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return head, tail
}

// LowerBound is a proven lower bound on the makespan of any schedule of
// the problem, the larger of two:
//
//   - PathAndJackson of the problem itself: the longest path through
//     releases and precedences, and for every device the optimum of its
//     preemptive one-machine relaxation;
//   - when some tasks span every device (barriers: the blocks sharded over
//     all devices), PathAndJackson of the problem with the barriers shrunk
//     to time 0, plus the total time of the barriers (see withoutBarriers
//     for why this is sound). It sees what the first misses: while a
//     barrier runs no device does anything else, so the idle time a device
//     must spend waiting at the start and the end of its work cannot be
//     filled with barriers.
func (p *Problem) LowerBound() int {
	lb, _ := p.LowerBoundBy()
	return lb
}

// LowerBoundBy is LowerBound and the relaxation that gives it (the first
// of path, device, link and barriers to reach it).
func (p *Problem) LowerBoundBy() (int, Bound) {
	lb, by := p.PathAndJackson()
	if q, _, barriers := p.withoutBarriers(); q != nil {
		if b, _ := q.PathAndJackson(); b+barriers > lb {
			lb, by = b+barriers, BoundBarriers
		}
	}
	return lb, by
}

// PathAndJackson is the longest path through releases and precedences,
// and for every device the optimum of its preemptive one-machine
// relaxation — its tasks alone, each released at its head, followed by
// its tail, allowed to be interrupted — which Jackson's rule (run the
// released task with the longest tail) solves exactly. A task on a device
// group counts on every device of the group. Tasks of time 0 (only in the
// relaxation of withoutBarriers) count on paths only. It also says which
// of the three (path, device, link) gives the bound.
func (p *Problem) PathAndJackson() (int, Bound) {
	head, tail := p.headsTails()
	lb, by := 0, BoundPath
	for i, t := range p.Tasks {
		lb = max(lb, head[i]+t.Time+tail[i])
	}
	for d := 0; d < p.Devices; d++ {
		var on []int
		for i := range p.Tasks {
			if p.Tasks[i].Time > 0 && p.Tasks[i].On(d) {
				on = append(on, i)
			}
		}
		if j := p.jackson(on, head, tail); j > lb {
			lb, by = j, BoundDevice
		}
	}
	if l := p.linkLoads(head, tail); l > lb {
		lb, by = l, BoundLink
	}
	return lb, by
}

// linkLoads is, for every link, the optimum of the same preemptive
// one-machine relaxation over its transfers: transfer k is released when
// its producer can end at the earliest (head + time), or at its Release
// if later, takes its Time, and is followed by its consumer's time and tail. Every schedule runs a
// link's transfers one at a time within those bounds, in some order (the
// relaxation forgets which), so this is a lower bound too. 0 without
// transfers.
func (p *Problem) linkLoads(head, tail []int) int {
	lb := 0
	for _, ks := range p.links() {
		rel, length, after := make([]int, len(ks)), make([]int, len(ks)), make([]int, len(ks))
		ids := make([]int, len(ks))
		for i, k := range ks {
			tr := p.Transfers[k]
			ids[i] = i
			rel[i] = max(head[tr.From]+p.Tasks[tr.From].Time, tr.Release)
			length[i] = tr.Time
			after[i] = p.Tasks[tr.To].Time + tail[tr.To]
		}
		lb = max(lb, jacksonOf(ids, rel, length, after))
	}
	return lb
}

// isBarrier reports whether task i occupies every device.
func (p *Problem) isBarrier(i int) bool {
	seen := newBitset(p.Devices)
	k := 0
	for _, d := range p.Tasks[i].Devices {
		if !seen.has(d) {
			seen.add(d)
			k++
		}
	}
	return k == p.Devices
}

// withoutBarriers returns the relaxation of the problem in which every
// task that spans all devices takes time 0, with the total time of those
// tasks and which tasks are barriers; nil when there is none.
//
// Why LowerBound may add that total to any lower bound of the relaxation:
// a barrier occupies every device, so in any schedule no other task
// overlaps it, and no two barriers overlap. Cut the barriers' intervals
// out of the time line: c(t) = t − (barrier time before t). Every other
// task keeps its length (no barrier lies inside it), every barrier
// becomes a point, and c is non-decreasing with c(y) − c(x) ≤ y − x, so
// a precedence end_a ≤ s_b + Lag survives as c(end_a) ≤ c(s_b) +
// max(Lag, 0) (only a required gap, Lag < 0, may shrink), a release r as
// c(s) ≥ r − total, Before pairs and the devices' exclusivity as they
// were. So c maps every schedule to a schedule of the relaxation, whose
// makespan is c(makespan) = makespan − total. Memory and periodic
// precedences play no part in PathAndJackson, so they are dropped.
func (p *Problem) withoutBarriers() (q *Problem, barrier []bool, total int) {
	q = &Problem{Devices: p.Devices, Tasks: make([]Task, len(p.Tasks))}
	barrier = make([]bool, len(p.Tasks))
	for i, t := range p.Tasks {
		q.Tasks[i] = t
		if p.isBarrier(i) {
			barrier[i] = true
			total += t.Time
			q.Tasks[i].Time = 0
		}
	}
	if total == 0 {
		return nil, nil, 0
	}
	for i := range q.Tasks {
		q.Tasks[i].Release = max(0, q.Tasks[i].Release-total)
	}
	for _, pr := range p.allPrecs() {
		if pr.Periods == 0 {
			pr.Lag = max(pr.Lag, 0)
			q.Precs = append(q.Precs, pr)
		}
	}
	return q, barrier, total
}

// jackson is the optimum of 1|r_j, pmtn|max(C_j + q_j) over the given
// tasks: at every moment the released task with the longest tail runs,
// preempted when a task with a longer tail is released.
func (p *Problem) jackson(tasks []int, head, tail []int) int {
	if len(tasks) == 0 {
		return 0
	}
	length := make([]int, len(p.Tasks))
	for _, i := range tasks {
		length[i] = p.Tasks[i].Time
	}
	return jacksonOf(tasks, head, length, tail)
}

// jacksonOf is jackson over jobs given by index into head, length and
// tail.
func jacksonOf(tasks []int, head, length, tail []int) int {
	if len(tasks) == 0 {
		return 0
	}
	order := append([]int(nil), tasks...)
	sort.Slice(order, func(a, b int) bool { return head[order[a]] < head[order[b]] })
	left := make(map[int]int, len(order))
	for _, i := range order {
		left[i] = length[i]
	}
	var ready []int // released, unfinished
	now, next, best := 0, 0, 0
	for next < len(order) || len(ready) > 0 {
		if len(ready) == 0 && now < head[order[next]] {
			now = head[order[next]]
		}
		for next < len(order) && head[order[next]] <= now {
			ready = append(ready, order[next])
			next++
		}
		// The released task with the longest tail (then the lowest index).
		k := 0
		for j := range ready {
			a, b := ready[j], ready[k]
			if tail[a] > tail[b] || (tail[a] == tail[b] && a < b) {
				k = j
			}
		}
		i := ready[k]
		run := left[i]
		if next < len(order) {
			run = min(run, head[order[next]]-now)
		}
		now += run
		left[i] -= run
		if left[i] == 0 {
			best = max(best, now+tail[i])
			ready = append(ready[:k], ready[k+1:]...)
		}
	}
	return best
}

// On reports whether the task occupies device d.
func (t *Task) On(d int) bool {
	for _, x := range t.Devices {
		if x == d {
			return true
		}
	}
	return false
}

// SharesAny reports whether the task occupies one of devs.
func (t *Task) SharesAny(devs []int) bool {
	for _, d := range devs {
		if t.On(d) {
			return true
		}
	}
	return false
}

func (p *Problem) shares(a, b int) bool {
	for _, d := range p.Tasks[a].Devices {
		if p.Tasks[b].On(d) {
			return true
		}
	}
	return false
}

// Encoder holds the encoding of a Problem in a solver: a start variable
// per task, exclusive devices through one order Boolean per pair of tasks
// that share a device and whose order is not already known, the
// precedences, the memory budget, and the transfers on their links (see
// assertTransfers). Callers add objective bounds (and, for periodic
// problems, their own constraints) on top.
type Encoder struct {
	X        *z3.Context
	S        *z3.Solver
	P        *Problem
	Start    []z3.Int
	Transfer []z3.Int // start of every transfer; nil without transfers
	Period   z3.Int   // P of a periodic problem; zero value otherwise

	after []bitset           // after[a].has(b): a surely ends before b starts
	order map[[2]int]z3.Bool // (a, b), a < b: true when a runs before b
	Head  []int              // earliest starts
	Tail  []int              // least time after each task's end

	// Set by LoadCuts: barrier[i] when task i spans every device, and
	// the heads and tails of the relaxation of withoutBarriers, in which
	// barriers take no time and Before pairs count as precedences.
	barrier      []bool
	cHead, cTail []int
}

// Encode asserts the problem into the solver. period is the term P of a
// periodic problem (nil when no precedence has Periods ≠ 0).
func Encode(x *z3.Context, s *z3.Solver, p *Problem, period *z3.Int) (*Encoder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	after, ok := p.knownOrder()
	if !ok {
		return nil, errors.New("smt: precedences and orders form a cycle")
	}
	e := &Encoder{X: x, S: s, P: p, after: after, order: map[[2]int]z3.Bool{}}
	if period != nil {
		e.Period = *period
	}
	e.Head, e.Tail = p.headsTails()
	n := len(p.Tasks)
	e.Start = make([]z3.Int, n)
	for i := range p.Tasks {
		e.Start[i] = x.IntVar(fmt.Sprintf("s%d", i))
		s.Assert(x.Ge(e.Start[i], x.IntVal(e.Head[i])))
	}
	end := func(i int) z3.Int { return x.Plus(e.Start[i], p.Tasks[i].Time) }
	for _, pr := range p.Precs {
		rhs := x.Plus(e.Start[pr.To], pr.Lag)
		if pr.Periods != 0 {
			if period == nil {
				return nil, fmt.Errorf("smt: precedence %d -> %d has a period term but the problem has no period", pr.From, pr.To)
			}
			rhs = x.Add(rhs, x.Scale(pr.Periods, *period))
		}
		s.Assert(x.Le(end(pr.From), rhs))
	}
	for _, b := range p.Before {
		s.Assert(x.Le(end(b[0]), e.Start[b[1]]))
	}
	if err := e.assertDeadlines(period); err != nil {
		return nil, err
	}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if !p.shares(a, b) || after[a].has(b) || after[b].has(a) {
				continue
			}
			o := x.BoolVar(fmt.Sprintf("o%d_%d", a, b))
			e.order[[2]int{a, b}] = o
			s.Assert(x.Implies(o, x.Le(end(a), e.Start[b])))
			s.Assert(x.Implies(x.Not(o), x.Le(end(b), e.Start[a])))
		}
	}
	if p.Memory > 0 {
		for d := 0; d < p.Devices; d++ {
			if p.entry(d) > p.Memory {
				s.Assert(x.False())
			}
			e.assertMemory(d, p.Memory, p.entry(d), nil)
		}
	}
	if len(p.Transfers) > 0 {
		if period != nil {
			return nil, errors.New("smt: transfers on links in a periodic problem are not encoded")
		}
		e.assertTransfers()
	}
	return e, x.Err()
}

// assertTransfers encodes the link rule of Transfer exactly: a start
// variable x_k per transfer with x_k ≥ end(From_k), x_k ≥ Release_k and
// s_{To_k} ≥ x_k +
// c_k, and for every two transfers k, l of one link: when From_k runs
// before From_l (the order literal of the two producers, which share a
// device), x_l ≥ x_k + c_k, otherwise x_k ≥ x_l + c_l; the transfers of
// one producer in list order. Exact with respect to the rule: for fixed
// starts, transferEnds (first in, first out, each transfer as early as
// its link allows) is the least solution of these constraints, so the
// consumers' starts satisfy them for some x iff they satisfy the rule.
func (e *Encoder) assertTransfers() {
	x, p, s := e.X, e.P, e.S
	e.Transfer = make([]z3.Int, len(p.Transfers))
	for k, tr := range p.Transfers {
		e.Transfer[k] = x.IntVar(fmt.Sprintf("x%d", k))
		s.Assert(x.Ge(e.Transfer[k], x.Plus(e.Start[tr.From], p.Tasks[tr.From].Time)))
		if tr.Release > 0 {
			s.Assert(x.Ge(e.Transfer[k], x.IntVal(tr.Release)))
		}
		s.Assert(x.Le(x.Plus(e.Transfer[k], tr.Time), e.Start[tr.To]))
	}
	first := func(k, l int) z3.Bool { // transfer k ends before l starts
		return x.Le(x.Plus(e.Transfer[k], p.Transfers[k].Time), e.Transfer[l])
	}
	for _, ks := range p.links() {
		for i, k := range ks {
			for _, l := range ks[i+1:] {
				a, b := p.Transfers[k].From, p.Transfers[l].From
				if p.FreeLinkOrder {
					y := x.BoolVar(fmt.Sprintf("y%d_%d", k, l))
					s.Assert(x.Implies(y, first(k, l)), x.Implies(x.Not(y), first(l, k)))
					continue
				}
				if a == b {
					s.Assert(first(k, l))
					continue
				}
				lit, known, val := e.OrderOf(a, b)
				switch {
				case known && val:
					s.Assert(first(k, l))
				case known:
					s.Assert(first(l, k))
				default:
					s.Assert(x.Implies(lit, first(k, l)), x.Implies(x.Not(lit), first(l, k)))
				}
			}
		}
	}
}

// OrderOf returns the literal "a runs before b" for two tasks sharing a
// device, or, where the order is known, known and its value.
func (e *Encoder) OrderOf(a, b int) (lit z3.Bool, known, value bool) {
	if e.after[a].has(b) {
		return z3.Bool{}, true, true
	}
	if e.after[b].has(a) {
		return z3.Bool{}, true, false
	}
	if a < b {
		return e.order[[2]int{a, b}], false, false
	}
	return e.X.Not(e.order[[2]int{b, a}]), false, false
}

// Before is the literal "a runs before b" (a ends before b starts) of two
// tasks that share a device, as the encoding decides it: the order
// Boolean of the pair, or a constant when the order is known. It lets
// callers tie constraints of their own to the devices' orders.
func (e *Encoder) Before(a, b int) (z3.Bool, error) {
	if a < 0 || a >= len(e.Start) || b < 0 || b >= len(e.Start) || a == b || !e.P.shares(a, b) {
		return z3.Bool{}, fmt.Errorf("smt: tasks %d and %d share no device", a, b)
	}
	lit, known, val := e.OrderOf(a, b)
	switch {
	case known && val:
		return e.X.True(), nil
	case known:
		return e.X.False(), nil
	}
	return lit, nil
}

// assertMemory bounds the memory of device d right after each task on it
// that allocates: entry + Σ_{i before j} m_i + m_j ≤ M. The running sum
// peaks right after an allocation, so those points suffice. entry, when
// not nil, is a term replacing the constant entry memory of the device.
func (e *Encoder) assertMemory(d, budget, constEntry int, entry *z3.Int) {
	x, p := e.X, e.P
	var onD []int
	for i := range p.Tasks {
		if p.Tasks[i].On(d) && p.Tasks[i].Memory != 0 {
			onD = append(onD, i)
		}
	}
	for _, j := range onD {
		mj := p.Tasks[j].Memory
		if mj <= 0 {
			continue
		}
		bound := budget - mj
		var lits []z3.Bool
		var coeffs []int
		var terms []z3.Int
		for _, i := range onD {
			if i == j {
				continue
			}
			lit, known, val := e.OrderOf(i, j)
			switch {
			case known && val:
				bound -= p.Tasks[i].Memory
			case known:
			case entry != nil:
				terms = append(terms, x.Ite(lit, x.IntVal(p.Tasks[i].Memory), x.IntVal(0)))
			default:
				lits = append(lits, lit)
				coeffs = append(coeffs, p.Tasks[i].Memory)
			}
		}
		if entry != nil {
			terms = append(terms, *entry)
			e.S.Assert(x.Le(x.Add(terms...), x.IntVal(bound)))
			continue
		}
		bound -= constEntry
		e.S.Assert(x.PbLe(lits, coeffs, bound))
	}
}

// AssertPrecedences adds precedences after Encode (for a solver that
// reuses one encoding across problems that differ only in them, inside
// Push/Pop). They do not refine the known orders.
func (e *Encoder) AssertPrecedences(precs []Prec) error {
	x := e.X
	for _, pr := range precs {
		if pr.From < 0 || pr.From >= len(e.Start) || pr.To < 0 || pr.To >= len(e.Start) {
			return fmt.Errorf("smt: precedence %d -> %d out of range", pr.From, pr.To)
		}
		rhs := x.Plus(e.Start[pr.To], pr.Lag)
		if pr.Periods != 0 {
			rhs = x.Add(rhs, x.Scale(pr.Periods, e.Period))
		}
		e.S.Assert(x.Le(x.Plus(e.Start[pr.From], e.P.Tasks[pr.From].Time), rhs))
	}
	return x.Err()
}

// AssertMemoryBudget bounds memory on every device under budget from the
// given entry memory, after Encode (see AssertPrecedences).
func (e *Encoder) AssertMemoryBudget(budget int, entry []int) {
	for d := 0; d < e.P.Devices; d++ {
		if entry[d] > budget {
			e.S.Assert(e.X.False())
		}
		e.assertMemory(d, budget, entry[d], nil)
	}
}

// AssertMemoryFrom bounds memory on every device with the entry memory
// given as terms (for the joint repetend search, where the entry depends
// on offset variables). The Problem's Memory must be set and its Entry nil.
func (e *Encoder) AssertMemoryFrom(entry []z3.Int) {
	for d := range entry {
		e.assertMemory(d, e.P.Memory, 0, &entry[d])
		e.S.Assert(e.X.Le(entry[d], e.X.IntVal(e.P.Memory)))
	}
}

// BoundMakespan asserts that every task ends by c (use inside Push/Pop).
func (e *Encoder) BoundMakespan(c int) {
	x := e.X
	for i, t := range e.P.Tasks {
		e.S.Assert(x.Le(e.Start[i], x.IntVal(c-t.Time-e.Tail[i])))
	}
	if e.cHead != nil {
		e.assertLoadCuts(c)
	}
}

// LoadCuts asserts the redundant constraints of assertLoadCuts on the
// heads now, and on the tails with every later BoundMakespan. They cost
// constraints but no variables, and let the solver see early what a
// device's load forbids. Measured: nn-shape, 4 micro-batches, memory 6,
// makespan ≤ 44 found in 0.9 s with them and not within 60 s without;
// 6 micro-batches, ≤ 60, in 10-40 s with them, not within 300 s without.
func (e *Encoder) LoadCuts() {
	p := e.P
	q, barrier, _ := p.withoutBarriers()
	if q == nil {
		q = &Problem{Devices: p.Devices, Tasks: p.Tasks, Precs: p.allPrecs()}
		barrier = make([]bool, len(p.Tasks))
	}
	// Before pairs are constraints of the problem: a task with
	// earlier instances of its block before it starts later.
	q.Precs = slices.Clip(q.Precs)
	for _, b := range p.Before {
		q.Precs = append(q.Precs, Prec{From: b[0], To: b[1]})
	}
	e.barrier = barrier
	e.cHead, e.cTail = q.headsTails()
	e.assertLoadCuts(-1)
}

// assertLoadCuts adds constraints that every schedule satisfies but that
// the solver would otherwise learn only by search: on each device, what
// runs before a task j takes time before it, and what runs after it takes
// time after it. In the relaxation of withoutBarriers (time measured
// without the barriers, c_j = s_j − Σ_{barrier b before j} t_b), the
// tasks i on j's device with a relaxed head cHead_i ≥ h that run before
// j run one after another inside [h, c_j), so for every h ≤ cHead_j
//
//	s_j ≥ h + Σ_{i on d, cHead_i ≥ h, i before j} t_i + Σ_{barrier b before j} t_b,
//
// and with the makespan c ≥ 0, symmetrically for every q ≤ cTail_j,
//
//	s_j + t_j + Σ_{i on d, cTail_i ≥ q, i after j} t_i + Σ_{barrier b after j} t_b + q ≤ c.
//
// (i "before j" is the order literal of the pair; barriers share every
// device, so each has one with j.) Without barriers these are the classic
// energetic cuts of one machine; with them they carry the relaxation's
// bound, in which a device cannot fill the idle time at the start and the
// end of its work with barriers, into the search.
func (e *Encoder) assertLoadCuts(c int) {
	x, p := e.X, e.P
	for d := 0; d < p.Devices; d++ {
		var on []int // tasks on d that are not barriers
		for i := range p.Tasks {
			if p.Tasks[i].On(d) && !e.barrier[i] {
				on = append(on, i)
			}
		}
		for j := range p.Tasks {
			if !p.Tasks[j].On(d) {
				continue
			}
			key := e.cHead
			if c >= 0 {
				key = e.cTail
			}
			levels := []int{key[j]}
			for _, i := range on {
				if i != j && key[i] <= key[j] {
					levels = append(levels, key[i])
				}
			}
			sort.Ints(levels)
			levels = slices.Compact(levels)
			for _, h := range levels {
				sum := h
				var terms []z3.Int
				count := func(i int) {
					lit, known, val := e.OrderOf(i, j)
					if c >= 0 {
						lit, known, val = e.OrderOf(j, i)
					}
					switch {
					case known && val:
						sum += p.Tasks[i].Time
					case !known:
						terms = append(terms, x.Ite(lit, x.IntVal(p.Tasks[i].Time), x.IntVal(0)))
					}
				}
				for _, i := range on {
					if i == j || key[i] < h {
						continue
					}
					count(i)
				}
				for b := range p.Tasks {
					if b == j || !e.barrier[b] {
						continue
					}
					count(b)
				}
				if len(terms) == 0 {
					continue // the heads and tails already say it
				}
				terms = append(terms, x.IntVal(sum))
				if c < 0 {
					e.S.Assert(x.Ge(e.Start[j], x.Add(terms...)))
				} else {
					terms = append(terms, e.Start[j])
					e.S.Assert(x.Le(x.Add(terms...), x.IntVal(c-p.Tasks[j].Time)))
				}
			}
		}
	}
}

// Starts reads the start of every task from a model.
func (e *Encoder) Starts(m *z3.Model) ([]int, error) {
	out := make([]int, len(e.Start))
	for i, s := range e.Start {
		v, err := m.Int(s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// TransferStarts reads every transfer's start from a model (nil without
// transfers).
func (e *Encoder) TransferStarts(m *z3.Model) ([]int, error) {
	if e.Transfer == nil {
		return nil, nil
	}
	out := make([]int, len(e.Transfer))
	for k, t := range e.Transfer {
		v, err := m.Int(t)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// fifoTransferStarts is when every transfer starts under the producers'
// order (transferEnds): a valid choice under FreeLinkOrder too.
func (p *Problem) fifoTransferStarts(starts []int) []int {
	xs := p.transferEnds(starts)
	for k := range xs {
		xs[k] -= p.Transfers[k].Time
	}
	return xs
}

// transfersFit checks given transfer starts: each no earlier than its
// producer's end and its release, ending by its consumer's start, and no
// two on one link overlapping (in whatever order).
func (p *Problem) transfersFit(starts, xs []int) bool {
	if len(xs) != len(p.Transfers) {
		return false
	}
	for k, tr := range p.Transfers {
		if xs[k] < starts[tr.From]+p.Tasks[tr.From].Time || xs[k] < tr.Release || xs[k]+tr.Time > starts[tr.To] {
			return false
		}
	}
	for _, ks := range p.links() {
		ks = slices.Clone(ks)
		slices.SortFunc(ks, func(k, l int) int { return xs[k] - xs[l] })
		for i := 1; i < len(ks); i++ {
			if xs[ks[i-1]]+p.Transfers[ks[i-1]].Time > xs[ks[i]] {
				return false
			}
		}
	}
	return true
}

// Makespan of given starts.
func (p *Problem) Makespan(starts []int) int {
	m := 0
	for i, t := range p.Tasks {
		m = max(m, starts[i]+t.Time)
	}
	return m
}
