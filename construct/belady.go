package construct

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// # Fixed orders timed by Belady's rule
//
// Belady times fixed per-device orders under a memory budget with an
// event simulation that offloads activations by Belady's replacement rule
// (Belady, "A study of replacement algorithms for a virtual-storage
// computer", 1966): when a device's order would soon need more memory
// than its budget, the live activation whose next use (its consumer)
// comes furthest later in the order goes to host memory, and it comes
// back just before its consumer. The orders are those a device would run
// with more memory (beladySources: periodic orders that start every block
// as early as its dependencies allow, and a list schedule's without a
// budget), made to fit the budget by moving what it does not need soon.
// The portfolio adds the best of them when offload is on
// (beladyCandidates).

// BeladyOptions configure Belady.
type BeladyOptions struct {
	// Memory is the per-device budget (placement's Budget); it must
	// bind somewhere.
	Memory int
	// Horizon is how far ahead a device looks: an offload starts when
	// the device's order, run as early as its dependencies allow, would
	// exceed its budget within Horizon of now (0: twice the offload time).
	Horizon int
	// Lead is how much earlier than due a reload may start (due: its
	// consumer's earliest start less the reload's time), where the
	// memory it takes back lets every forward before the consumer run.
	// A reload that is due starts whenever its memory fits.
	Lead int
	// MinLife, when positive, offloads only activations whose consumer
	// is at least MinLife from now (its earliest start); otherwise the
	// move out and back must fit.
	MinLife int
	// Longest, when set, offloads on each device only the instances of
	// its forward block whose activation lives longest when every block
	// starts as early as its dependencies allow (placement's Heads: its
	// consumer's head less its own); the others stay.
	Longest bool
	// Release, when set, is every instance x = m·K + i's earliest start
	// (the times of a periodic schedule the orders come from): the
	// simulation keeps to its pace instead of running ahead.
	Release []int
	// Reserve keeps the host channel for the reloads: a reload due
	// before a move started now would end starts now where its memory
	// fits, before any offload.
	Reserve bool
}

// errBeladyShape says a placement is outside what Belady times.
var errBeladyShape = errors.New("construct: Belady needs blocks on one device each, no link channels and no overlap")

// Belady runs every device's order (orders[d]: every instance of the
// blocks on device d, each once) as early as the dependencies, the
// budget and the host channels allow, deciding to offload where the
// budget binds (see BeladyOptions), and returns the verified schedule
// with its decisions. It fails where the orders contradict the
// dependencies or the simulation gets stuck.
func Belady(p *placement.Placement, n int, orders [][]schedule.Ref, opt BeladyOptions) (*schedule.Schedule, error) {
	if err := checkArgs(p, n, opt.Memory); err != nil {
		return nil, err
	}
	s, err := simulate(p, n, orders, opt)
	if err != nil {
		return nil, err
	}
	return finishBelady(s)
}

// simulate runs Belady's simulation and returns its schedule, not yet
// verified nor compacted.
func simulate(p *placement.Placement, n int, orders [][]schedule.Ref, opt BeladyOptions) (*schedule.Schedule, error) {
	b, err := newBsim(p, n, orders, opt)
	if err != nil {
		return nil, err
	}
	if err := b.run(); err != nil {
		return nil, err
	}
	return b.raw(), nil
}

// Activation states of a forward instance in the simulation.
const (
	stKeep = iota // resident (or not yet run)
	stOut         // being offloaded
	stAway        // in host memory
	stBack        // being reloaded
	stHome        // reloaded
)

// transfer is the move a host channel carries.
type transfer struct {
	active bool
	x      int // forward instance
	reload bool
	end    int
}

type bsim struct {
	p       *placement.Placement
	n, k    int
	opt     BeladyOptions
	bud     []int
	dev     []int   // per block: its device
	ord     [][]int // per device: instances in order
	at      []int   // per instance: its position in its device's order
	topo    []int   // instances in an order that respects dependencies and device orders
	preds   [][]placement.Dep
	cons    []int  // per block: its consumer block (-1)
	src     []int  // per block: the offloadable forward it consumes (-1)
	allowed []bool // per block: may be offloaded (Longest)
	chanOf  []int  // per device: its host channel
	onChan  [][]int
	start   []int
	pos     []int
	busy    []int
	mem     []int
	state   []int8
	dec     []schedule.Decision
	tr      []transfer // per channel
	est     []int
	live    [][]int // per device: forward instances started and not decided, possibly stale
	away    [][]int // per device: forward instances away, possibly stale
	done    int
	horizon int
	window  int   // how far ahead in a device's order estimate looks
	maxOff  int   // the longest offload time
	rank    []int // per instance: its place in topo
	scratch []int // the instances estimate estimates, by rank
	fresh   []int
	merged  []int
	winEnd  []int // per device: the end of its window so far
}

func newBsim(p *placement.Placement, n int, orders [][]schedule.Ref, opt BeladyOptions) (*bsim, error) {
	if !oneDeviceEach(p) {
		return nil, errBeladyShape
	}
	k := len(p.Blocks)
	b := &bsim{p: p, n: n, k: k, opt: opt, dev: make([]int, k), preds: p.PredDeps(), cons: p.Consumers(), src: make([]int, k)}
	binds := false
	for d := range p.Devices {
		b.bud = append(b.bud, p.Budget(d, opt.Memory))
		binds = binds || b.bud[d] > 0
	}
	if !binds {
		return nil, fmt.Errorf("construct: Belady needs a memory budget")
	}
	maxOff := 0
	for i := range b.src {
		b.src[i] = -1
	}
	for i, bl := range p.Blocks {
		b.dev[i] = bl.Devices[0]
		if p.Offloadable(i, b.cons) {
			b.src[b.cons[i]] = i
			maxOff = max(maxOff, p.OffloadTime(i))
		}
	}
	if maxOff == 0 {
		return nil, fmt.Errorf("construct: Belady needs an offloadable block")
	}
	b.allowed = make([]bool, k)
	for i := range b.allowed {
		b.allowed[i] = p.Offloadable(i, b.cons)
	}
	if opt.Longest {
		head := p.Heads()
		best := make([]int, p.Devices)
		for d := range best {
			best[d] = -1
		}
		for i := range b.allowed {
			if !b.allowed[i] {
				continue
			}
			d := b.dev[i]
			if j := best[d]; j < 0 || head[b.cons[i]]-head[i] > head[b.cons[j]]-head[j] {
				best[d] = i
			}
		}
		for i := range b.allowed {
			b.allowed[i] = b.allowed[i] && best[b.dev[i]] == i
		}
	}
	b.maxOff = maxOff
	b.horizon = opt.Horizon
	if b.horizon <= 0 {
		b.horizon = 2 * maxOff
	}
	// A device's blocks of a few micro-batches.
	for _, bs := range p.DeviceBlocks() {
		b.window = max(b.window, 4*len(bs))
	}
	if opt.Release != nil && len(opt.Release) != n*k {
		return nil, fmt.Errorf("construct: Belady: %d release times for %d instances", len(opt.Release), n*k)
	}
	if len(orders) != p.Devices {
		return nil, fmt.Errorf("construct: Belady: %d orders for %d devices", len(orders), p.Devices)
	}
	nk := n * k
	if err := b.readOrders(orders); err != nil {
		return nil, err
	}
	b.chanOf = make([]int, p.Devices)
	b.onChan = make([][]int, p.Devices)
	for d := range p.Devices {
		c := p.HostChannel(d)
		if c < 0 || c >= p.Devices {
			return nil, errBeladyShape
		}
		b.chanOf[d] = c
		b.onChan[c] = append(b.onChan[c], d)
	}
	b.start = make([]int, nk)
	for x := range b.start {
		b.start[x] = -1
	}
	b.pos = make([]int, p.Devices)
	b.busy = make([]int, p.Devices)
	b.mem = make([]int, p.Devices)
	b.state = make([]int8, nk)
	b.dec = make([]schedule.Decision, nk)
	b.tr = make([]transfer, p.Devices)
	b.est = make([]int, nk)
	b.rank = make([]int, nk)
	b.winEnd = make([]int, p.Devices)
	for r, x := range b.topo {
		b.rank[x] = r
		b.est[x] = farAway
	}
	b.live = make([][]int, p.Devices)
	b.away = make([][]int, p.Devices)
	return b, nil
}

// readOrders checks the devices' orders (every instance once, on its
// device) and sets each instance's position (at), the orders (ord) and
// an order of all instances that respects the dependencies and the
// device orders (topo).
func (b *bsim) readOrders(orders [][]schedule.Ref) error {
	p, n, k := b.p, b.n, b.k
	nk := n * k
	b.at = make([]int, nk)
	seen := make([]bool, nk)
	b.ord = make([][]int, p.Devices)
	for d, o := range orders {
		for j, r := range o {
			if r.Block < 0 || r.Block >= k || r.Micro < 0 || r.Micro >= n || b.dev[r.Block] != d {
				return fmt.Errorf("construct: Belady: order of device %d names an instance not on it", d)
			}
			x := r.Micro*k + r.Block
			if seen[x] {
				return fmt.Errorf("construct: Belady: order of device %d repeats an instance", d)
			}
			seen[x] = true
			b.at[x] = j
			b.ord[d] = append(b.ord[d], x)
		}
	}
	for x := range seen {
		if !seen[x] {
			return fmt.Errorf("construct: Belady: the orders miss an instance")
		}
	}
	// Instances in an order that respects the dependencies and the
	// device orders (Kahn); a cycle means the orders contradict them.
	indeg := make([]int, nk)
	succs := p.SuccDeps()
	for x := range indeg {
		indeg[x] = len(b.preds[x%k])
		if b.at[x] > 0 {
			indeg[x]++
		}
	}
	var queue []int
	for x := range indeg {
		if indeg[x] == 0 {
			queue = append(queue, x)
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		b.topo = append(b.topo, x)
		m, i := x/k, x%k
		release := func(y int) {
			indeg[y]--
			if indeg[y] == 0 {
				queue = append(queue, y)
			}
		}
		for _, dp := range succs[i] {
			release(m*k + dp.To)
		}
		if o := b.ord[b.dev[i]]; b.at[x]+1 < len(o) {
			release(o[b.at[x]+1])
		}
	}
	if len(b.topo) != nk {
		return fmt.Errorf("construct: Belady: the orders contradict the dependencies")
	}
	return nil
}

func (b *bsim) time(x int) int { return b.p.Blocks[x%b.k].Time }

// fits reports whether amount more fits device d now.
func (b *bsim) fits(d, amount int) bool {
	return b.bud[d] <= 0 || b.mem[d]+amount <= b.bud[d]
}

// ready reports whether instance x may start at t.
func (b *bsim) ready(x, t int) bool {
	if b.opt.Release != nil && b.opt.Release[x] > t {
		return false
	}
	m, i := x/b.k, x%b.k
	for _, dp := range b.preds[i] {
		px := m*b.k + dp.From
		if b.start[px] < 0 || b.start[px]+b.p.Delay(dp) > t {
			return false
		}
	}
	if f := b.src[i]; f >= 0 {
		if s := b.state[m*b.k+f]; s != stKeep && s != stHome {
			return false
		}
	}
	if mm := b.p.Blocks[i].Memory; mm > 0 && !b.fits(b.dev[i], mm) {
		return false
	}
	return true
}

// run simulates until every instance has started.
func (b *bsim) run() error {
	nk := b.n * b.k
	limit := 0
	for x := range nk {
		limit += b.time(x)
		if b.src[x%b.k] >= 0 {
			limit += 2 * b.p.OffloadTime(b.src[x%b.k])
		}
	}
	for _, dp := range b.p.Deps {
		limit += b.n * b.p.Delay(dp)
	}
	patience := 8 + 4*(b.horizon+b.opt.Lead+2*b.maxOff+b.opt.MinLife)
	if r := b.opt.Release; r != nil {
		limit += slices.Max(r)
		for _, o := range b.ord {
			for j := 1; j < len(o); j++ {
				patience = max(patience, 8+r[o[j]]-r[o[j-1]])
			}
		}
	}
	idle := 0
	for t := 0; b.done < nk; t++ {
		if t > limit {
			return fmt.Errorf("construct: Belady: no end by time %d", limit)
		}
		moved := false
		for c := range b.tr {
			tr := &b.tr[c]
			if !tr.active || tr.end > t {
				continue
			}
			tr.active = false
			i := tr.x % b.k
			d := b.dev[i]
			if tr.reload {
				b.state[tr.x] = stHome
			} else {
				b.state[tr.x] = stAway
				b.mem[d] -= b.p.Freed(i, placement.Offload)
				b.away[d] = append(b.away[d], tr.x)
			}
			moved = true
		}
		running := false
		for d := range b.ord {
			for b.busy[d] <= t && b.pos[d] < len(b.ord[d]) {
				x := b.ord[d][b.pos[d]]
				if !b.ready(x, t) {
					break
				}
				b.begin(x, t)
				moved = true
			}
			running = running || b.busy[d] > t
		}
		estDone := false
		for c := range b.tr {
			if b.tr[c].active || len(b.onChan[c]) == 0 {
				continue
			}
			if !estDone {
				b.estimate(t)
				estDone = true
			}
			if b.decide(c, t) {
				moved = true
			}
		}
		for c := range b.tr {
			running = running || b.tr[c].active
		}
		// Nothing moving may be waiting for a release or a reload's due
		// time; nothing moving for longer than any of those waits is
		// stuck.
		idle++
		if moved || running {
			idle = 0
		}
		if idle > patience {
			return fmt.Errorf("construct: Belady: stuck at time %d", t-idle)
		}
	}
	return nil
}

// begin starts instance x at t.
func (b *bsim) begin(x, t int) {
	i := x % b.k
	d := b.dev[i]
	b.start[x] = t
	b.est[x] = t
	b.busy[d] = t + b.time(x)
	b.mem[d] += b.p.Blocks[i].Memory
	b.pos[d]++
	b.done++
	if c := b.cons[i]; c >= 0 && b.src[c] == i {
		b.live[d] = append(b.live[d], x)
	}
}

// farAway is the estimate of an instance beyond the window.
const farAway = 1 << 40

// estimate sets est[x], for every instance not started within window
// places of the next in its device's order, to its earliest start given
// what has run by t, with no budget: a lower bound. The others further
// ahead are far away (farAway, their estimate from the start).
func (b *bsim) estimate(t int) {
	// The window's instances, kept in an order that respects the
	// dependencies and device orders (rank): those started leave, those
	// the windows reach join, merged in.
	keep := b.scratch[:0]
	for _, x := range b.scratch {
		if b.start[x] < 0 {
			keep = append(keep, x)
		}
	}
	b.fresh = b.fresh[:0]
	for d, o := range b.ord {
		for ; b.winEnd[d] < min(len(o), b.pos[d]+b.window); b.winEnd[d]++ {
			if x := o[b.winEnd[d]]; b.start[x] < 0 {
				b.fresh = append(b.fresh, x)
			}
		}
	}
	byRank := func(x, y int) int { return cmp.Compare(b.rank[x], b.rank[y]) }
	if len(b.fresh) > 0 {
		slices.SortFunc(b.fresh, byRank)
		b.merged = b.merged[:0]
		j := 0
		for _, x := range keep {
			for j < len(b.fresh) && b.rank[b.fresh[j]] < b.rank[x] {
				b.merged = append(b.merged, b.fresh[j])
				j++
			}
			b.merged = append(b.merged, x)
		}
		b.merged = append(b.merged, b.fresh[j:]...)
		keep, b.merged = b.merged, keep
	}
	b.scratch = keep
	for _, x := range b.scratch {
		m, i := x/b.k, x%b.k
		e := t
		if b.opt.Release != nil {
			e = max(e, b.opt.Release[x])
		}
		d := b.dev[i]
		if j := b.at[x]; j > 0 {
			px := b.ord[d][j-1]
			e = max(e, b.est[px]+b.time(px))
		}
		for _, dp := range b.preds[i] {
			e = max(e, b.est[m*b.k+dp.From]+b.p.Delay(dp))
		}
		b.est[x] = e
	}
}

// consumerOf is the instance that consumes forward instance x.
func (b *bsim) consumerOf(x int) int { return (x/b.k)*b.k + b.cons[x%b.k] }

// decide starts a move on idle channel c at t, if one is due: a due
// reload, else an offload the budget soon needs, else an early reload.
func (b *bsim) decide(c, t int) bool {
	type pick struct{ x, d, key int }
	due, early := pick{x: -1}, pick{x: -1}
	for _, d := range b.onChan[c] {
		x := b.nextReload(d)
		if x < 0 {
			continue
		}
		i := x % b.k
		y := b.consumerOf(x)
		amount := b.p.Freed(i, placement.Offload)
		if !b.fits(d, amount) {
			continue
		}
		when := b.est[y] - b.p.OffloadTime(i)
		switch {
		case when <= t, b.opt.Reserve && when < t+b.maxOff:
			if due.x < 0 || when < due.key {
				due = pick{x, d, when}
			}
		case when <= t+b.opt.Lead && b.roomBefore(d, y, amount):
			if early.x < 0 || when < early.key {
				early = pick{x, d, when}
			}
		}
	}
	if due.x >= 0 {
		b.reload(c, due.x, t)
		return true
	}
	for _, d := range b.onChan[c] {
		if x := b.victim(d, t); x >= 0 {
			b.offload(c, x, t)
			return true
		}
	}
	if early.x >= 0 {
		b.reload(c, early.x, t)
		return true
	}
	return false
}

// nextReload is the away activation on d whose consumer comes first in
// d's order, -1 when none.
func (b *bsim) nextReload(d int) int {
	best := -1
	keep := b.away[d][:0]
	for _, x := range b.away[d] {
		if b.state[x] != stAway {
			continue
		}
		keep = append(keep, x)
		if best < 0 || b.at[b.consumerOf(x)] < b.at[b.consumerOf(best)] {
			best = x
		}
	}
	b.away[d] = keep
	return best
}

// roomBefore reports whether, with amount more on d now, every block of
// d's order before y still fits (the activations away whose consumers
// come before y back too).
func (b *bsim) roomBefore(d, y, amount int) bool {
	if b.bud[d] <= 0 {
		return true
	}
	level := b.mem[d] + amount
	for j := b.pos[d]; j < b.at[y]; j++ {
		x := b.ord[d][j]
		level += b.back(x)
		level += b.p.Blocks[x%b.k].Memory
		if level > b.bud[d] {
			return false
		}
	}
	return true
}

// back is the memory that must come back to x's device before x starts:
// that of the activation x consumes, when it is away or on its way out.
func (b *bsim) back(x int) int {
	i := x % b.k
	f := b.src[i]
	if f < 0 {
		return 0
	}
	if s := b.state[(x/b.k)*b.k+f]; s == stOut || s == stAway {
		return b.p.Freed(f, placement.Offload)
	}
	return 0
}

// victim is the live activation on d to offload at t, -1 when none: when
// d's order, run from its earliest starts, would exceed the budget within
// the horizon, the live activation whose consumer comes furthest later in
// the order, past that point, with time to go out and come back before
// it.
func (b *bsim) victim(d, t int) int {
	if b.bud[d] <= 0 {
		return -1
	}
	level := b.mem[d]
	// An offload under way frees its memory when it ends.
	var credit, creditAt int
	if tr := b.tr[b.chanOf[d]]; tr.active && !tr.reload && b.dev[tr.x%b.k] == d {
		credit, creditAt = b.p.Freed(tr.x%b.k, placement.Offload), tr.end
	}
	over := -1
	for j := b.pos[d]; j < len(b.ord[d]); j++ {
		x := b.ord[d][j]
		if b.est[x] > t+b.horizon {
			break
		}
		if credit > 0 && b.est[x] >= creditAt {
			level -= credit
			credit = 0
		}
		level += b.back(x)
		mm := b.p.Blocks[x%b.k].Memory
		level += mm
		if level > b.bud[d] && (mm > 0 || b.back(x) > 0) {
			over = j
			break
		}
	}
	if over < 0 {
		return -1
	}
	best, bestAt := -1, -1
	keep := b.live[d][:0]
	for _, x := range b.live[d] {
		y := b.consumerOf(x)
		if b.state[x] != stKeep || b.start[y] >= 0 {
			continue
		}
		keep = append(keep, x)
		i := x % b.k
		if !b.allowed[i] || b.start[x]+b.time(x) > t || b.at[y] <= over || b.est[y] < t+max(2*b.p.OffloadTime(i), b.opt.MinLife) {
			continue
		}
		if b.at[y] > bestAt {
			best, bestAt = x, b.at[y]
		}
	}
	b.live[d] = keep
	return best
}

func (b *bsim) offload(c, x, t int) {
	i := x % b.k
	b.state[x] = stOut
	b.dec[x] = schedule.Decision{Block: i, Micro: x / b.k, Action: placement.Offload, Start: t}
	b.tr[c] = transfer{active: true, x: x, end: t + b.p.OffloadTime(i)}
}

func (b *bsim) reload(c, x, t int) {
	i := x % b.k
	b.state[x] = stBack
	b.dec[x].Reload = t
	b.mem[b.dev[i]] += b.p.Freed(i, placement.Offload)
	b.tr[c] = transfer{active: true, x: x, reload: true, end: t + b.p.OffloadTime(i)}
}

// raw is the schedule the simulation ran, with its decisions.
func (b *bsim) raw() *schedule.Schedule {
	p := b.p
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: b.n, Memory: b.opt.Memory}}
	s.Instances = make([]schedule.Instance, 0, len(b.start))
	for x, t := range b.start {
		s.Instances = append(s.Instances, schedule.Instance{Block: x % b.k, Micro: x / b.k, Start: t})
	}
	s.Sort()
	for _, dc := range b.dec {
		if dc.Action == placement.Offload {
			s.Decisions = append(s.Decisions, dc)
		}
	}
	return s
}

// finishBelady verifies a simulated schedule and compacts it.
func finishBelady(s *schedule.Schedule) (*schedule.Schedule, error) {
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("construct: placement %q: Belady schedule fails verification: %w", s.Placement.Name, err)
	}
	if c, err := compact.Compact(s.Spec, compact.Keep{From: s}); err == nil {
		return c, nil
	}
	return s, nil
}

// beladySource is a schedule whose per-device orders Belady times.
type beladySource struct {
	name    string
	orders  [][]schedule.Ref
	release []int // BeladyOptions.Release, or nil
}

// beladyUnroll is the most micro-batches an ideal order starts per
// period.
const beladyUnroll = 3

// beladySources are the orders Belady times: the ideal orders
// (idealOrders) that start u = 1 … beladyUnroll micro-batches every
// period, for periods from u times the largest device load to u times
// one more, each as it is and paced by its times (BeladyOptions.Release),
// and the order of the oldest-first list schedule without a budget
// (a deep warm-up).
func beladySources(ctx context.Context, p *placement.Placement, n int) []beladySource {
	var out []beladySource
	seen := map[string]bool{}
	addOrders := func(name string, s *schedule.Schedule) {
		o := schedule.Orders(s)
		key := fmt.Sprint(o)
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, beladySource{name, o, nil})
	}
	lo := 0
	for _, l := range p.Loads() {
		lo = max(lo, l)
	}
	for u := 1; u <= beladyUnroll; u++ {
		for per := lo * u; per <= (lo+1)*u; per++ {
			// Critical-first offsets only where one micro-batch starts
			// per period; several per period fare better without.
			for _, critical := range []bool{false, true}[:max(1, 3-u)] {
				if per == lo*u && u > 1 {
					continue // the same as one per period
				}
				o := idealOrders(p, n, per, u, critical)
				if o == nil {
					continue
				}
				key := fmt.Sprint(o)
				if seen[key] {
					continue
				}
				seen[key] = true
				name := fmt.Sprintf("ideal period %d/%d", per, u)
				if critical {
					name += " critical"
				}
				out = append(out, beladySource{name, o, nil},
					beladySource{name + " paced", o, idealTimes(p, n, per, u, critical)})
			}
		}
	}
	if ctx.Err() == nil {
		if s, err := List(p, n, ListOptions{Rule: OldestFirst}); err == nil {
			addOrders(fmt.Sprintf("list/%s without a budget", OldestFirst), s)
		}
	}
	return out
}

// beladyParam is one set of options tried per order, as multiples of
// the offload time T: horizon T·h, lead T·l/2, least life T·life, and
// whether reloads keep the host channel (Reserve).
type beladyParam struct {
	h, l, life int
	reserve    bool
}

// options are the simulation's options for a budget of memory and moves
// of t.
func (pr beladyParam) options(memory, t int) BeladyOptions {
	return BeladyOptions{Memory: memory, Horizon: pr.h * t, Lead: pr.l * t / 2, MinLife: pr.life * t, Reserve: pr.reserve}
}

// beladyParams are the options tried per order.
var beladyParams = []beladyParam{{2, 1, 0, false}, {2, 2, 0, false}, {3, 1, 0, false}, {4, 2, 0, false}, {3, 1, 0, true}, {4, 2, 0, true}, {3, 1, 4, true}}

// beladyKept is how many of Belady's schedules join the portfolio.
const beladyKept = 3

// beladyCandidates times every source's orders with Belady under the
// budget for every parameter set and returns the beladyKept shortest
// (then by name) that verify,
// named "order/<source>/belady h H lead L".
func beladyCandidates(ctx context.Context, p *placement.Placement, n, memory int) []Entry {
	return beladyAll(ctx, p, n, memory, beladyKept)
}

// beladyAll is beladyCandidates keeping keep.
func beladyAll(ctx context.Context, p *placement.Placement, n, memory, beladyKeep int) []Entry {
	if !oneDeviceEach(p) {
		return nil
	}
	t := 0
	c := p.Consumers()
	for i := range p.Blocks {
		if p.Offloadable(i, c) {
			t = max(t, p.OffloadTime(i))
		}
	}
	if t == 0 {
		return nil
	}
	var out []Entry
	for _, src := range beladySources(ctx, p, n) {
		if ctx.Err() != nil {
			break
		}
		jobs := make([]beladyJob, len(beladyParams))
		for k, pr := range beladyParams {
			opt := pr.options(memory, t)
			opt.Release = src.release
			jobs[k] = beladyJob{orders: src.orders, opt: opt, name: "order/" + src.name}
		}
		out = append(out, runBelady(p, n, jobs)...)
	}
	out = append(out, beladyDraws(ctx, p, n, memory, t)...)
	// Only the shortest are verified and compacted (compaction never
	// lengthens a schedule, so it cannot bring a longer one ahead by
	// more than it gains; twice as many are finished as kept).
	order := func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Makespan, b.Makespan), cmp.Compare(a.Name, b.Name))
	}
	slices.SortStableFunc(out, order)
	var done []Entry
	for _, c := range out {
		if len(done) == 2*beladyKeep {
			break
		}
		s, err := finishBelady(c.Schedule)
		if err != nil {
			continue
		}
		done = append(done, Entry{Name: c.Name, Schedule: s, Makespan: schedule.Makespan(s)})
	}
	out = done
	slices.SortStableFunc(out, order)
	return out[:min(len(out), beladyKeep)]
}

// idealOrders are the per-device orders of a periodic schedule that
// starts u micro-batches every period, each block as early as its
// dependencies allow, in the order of criticalTopo (copies of one block
// in turn), in the first time whose slots modulo the period its device
// has free (iterative modulo scheduling without backtracking, and
// without memory; critical: see idealOffsets): micro-batch q·u + c's block i at q·period +
// off[c][i], copy c released at c·period/u. Nil where some block finds
// no free slots.
func idealOrders(p *placement.Placement, n, period, u int, critical bool) [][]schedule.Ref {
	o, _ := ordersOf(p, n, period, u, idealOffsets(p, period, u, critical))
	return o
}

// idealTimes are the start times of idealOrders' periodic schedule, per
// instance x = m·K + i; nil where idealOrders is.
func idealTimes(p *placement.Placement, n, period, u int, critical bool) []int {
	_, t := ordersOf(p, n, period, u, idealOffsets(p, period, u, critical))
	return t
}

// ordersOf are the per-device orders and the start times (per instance
// x = m·K + i) of the periodic schedule of n micro-batches that starts
// micro-batch q·u + c's block i at q·period + off[c][i]; nil for nil
// offsets.
func ordersOf(p *placement.Placement, n, period, u int, off [][]int) ([][]schedule.Ref, []int) {
	if off == nil {
		return nil, nil
	}
	k := len(p.Blocks)
	type item struct{ t, i, m int }
	per := make([][]item, p.Devices)
	times := make([]int, n*k)
	for m := range n {
		for i, b := range p.Blocks {
			t := (m/u)*period + off[m%u][i]
			times[m*k+i] = t
			for _, d := range b.Devices {
				per[d] = append(per[d], item{t, i, m})
			}
		}
	}
	out := make([][]schedule.Ref, p.Devices)
	for d, items := range per {
		slices.SortFunc(items, func(a, b item) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.m, b.m), cmp.Compare(a.i, b.i))
		})
		for _, it := range items {
			out[d] = append(out[d], schedule.Ref{Block: it.i, Micro: it.m})
		}
	}
	return out, times
}

// idealOffsets are idealOrders' start offsets, per copy and block, the
// blocks taken in the order of criticalTopo when critical and of
// placement's Topo otherwise; nil where some block finds no free slots.
func idealOffsets(p *placement.Placement, period, u int, critical bool) [][]int {
	order, _ := p.Topo()
	if critical {
		order = criticalTopo(p)
	}
	return offsetsIn(p, period, u, order, nil)
}

// offsetsIn are idealOffsets with the blocks taken in the given
// topological order, block i's copies each at least delay[i] (nil: 0)
// after its dependencies allow.
func offsetsIn(p *placement.Placement, period, u int, order, delay []int) [][]int {
	if order == nil || period <= 0 || u < 1 {
		return nil
	}
	k := len(p.Blocks)
	off := make([][]int, u)
	for c := range off {
		off[c] = make([]int, k)
	}
	busy := make([][]bool, p.Devices)
	for d := range busy {
		busy[d] = make([]bool, period)
	}
	preds := p.PredDeps()
	for _, i := range order {
		b := p.Blocks[i]
		if b.Time > period {
			return nil
		}
		for c := range u {
			t := c * period / u
			for _, dp := range preds[i] {
				t = max(t, off[c][dp.From]+p.Delay(dp))
			}
			if delay != nil {
				t += delay[i]
			}
			placed := false
			for try := t; try < t+period && !placed; try++ {
				free := true
				for _, d := range b.Devices {
					for v := range b.Time {
						if busy[d][(try+v)%period] {
							free = false
						}
					}
				}
				if !free {
					continue
				}
				for _, d := range b.Devices {
					for v := range b.Time {
						busy[d][(try+v)%period] = true
					}
				}
				off[c][i], placed = try, true
			}
			if !placed {
				return nil
			}
		}
	}
	return off
}

// criticalTopo is a topological order of p's blocks that, among the
// blocks whose predecessors are all placed, takes the one with the
// longest path to the end first (lowest index on a tie); nil on a cycle.
func criticalTopo(p *placement.Placement) []int {
	topo, ok := p.Topo()
	if !ok {
		return nil
	}
	k := len(p.Blocks)
	height := make([]int, k)
	succs := p.SuccDeps()
	for j := len(topo) - 1; j >= 0; j-- {
		i := topo[j]
		height[i] = p.Blocks[i].Time
		for _, d := range succs[i] {
			height[i] = max(height[i], p.Delay(d)+height[d.To])
		}
	}
	indeg := make([]int, k)
	for _, d := range p.Deps {
		indeg[d.To]++
	}
	var ready, out []int
	for i := range indeg {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		best := 0
		for j, i := range ready {
			if height[i] > height[ready[best]] || (height[i] == height[ready[best]] && i < ready[best]) {
				best = j
			}
		}
		i := ready[best]
		ready = append(ready[:best], ready[best+1:]...)
		out = append(out, i)
		for _, d := range succs[i] {
			indeg[d.To]--
			if indeg[d.To] == 0 {
				ready = append(ready, d.To)
			}
		}
	}
	return out
}

// randomTopo is a topological order of p's blocks that takes, among the
// blocks whose predecessors are all placed, one drawn by r; nil on a
// cycle. Random orders fill the period's slots differently from the
// critical path's: on the V placement they find orders whose memory
// the budget fits better (at memory 4, 16 micro-batches: 132 against
// 142 for the best ideal order).
func randomTopo(p *placement.Placement, r *rand) []int {
	indeg := make([]int, len(p.Blocks))
	for _, d := range p.Deps {
		indeg[d.To]++
	}
	succs := p.SuccDeps()
	var ready, out []int
	for i := range indeg {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		j := r.intn(len(ready))
		i := ready[j]
		ready = append(ready[:j], ready[j+1:]...)
		out = append(out, i)
		for _, d := range succs[i] {
			indeg[d.To]--
			if indeg[d.To] == 0 {
				ready = append(ready, d.To)
			}
		}
	}
	if len(out) != len(p.Blocks) {
		return nil
	}
	return out
}

// beladyDrawn is how many drawn orders Belady tries per period.
const beladyDrawn = 96

// drawnMicro is the most micro-batches a drawn order is first tried on.
const drawnMicro = 16

// drawnKept is how many of the drawn orders that end first there are
// then run on every micro-batch.
const drawnKept = 6

// drawnParams are the options (as beladyParams) a drawn order is tried
// with.
var drawnParams = []struct {
	h, l, life int
	reserve    bool
}{{4, 2, 0, true}, {4, 2, 0, false}}

// drawnOffsets are the offsets of draw number seed (≥ 1) of idealOffsets
// for the period: the blocks in a random topological order (randomTopo)
// and, for two draws in three, some blocks (one in 3, 6 or 9) held one or
// two steps after their dependencies allow. The same seed gives the same
// offsets on every run.
func drawnOffsets(p *placement.Placement, period, u, seed int) [][]int {
	r := newRand(uint64(seed))
	order := randomTopo(p, r)
	delay := make([]int, len(p.Blocks))
	if seed%3 != 0 {
		for i := range delay {
			if r.intn(3+seed%3*3) == 0 {
				delay[i] = 1 + r.intn(2)
			}
		}
	}
	return offsetsIn(p, period, u, order, delay)
}

// beladyDraws runs Belady on drawn orders (drawnOffsets, beladyDrawn of
// each) of one micro-batch per period at the largest device load and of
// two per that load and a half: every draw on at most drawnMicro
// micro-batches with each of drawnParams, then the drawnKept distinct
// draws that end first there on all n with each of beladyParams, as they
// are and paced by their times. It returns those runs, not yet verified,
// named "order/drawn S period P/u[ paced]/belady h H lead L life X
// [reserve]". Draws and runs go side by side in fixed batches; the
// result is the same on every machine.
func beladyDraws(ctx context.Context, p *placement.Placement, n, memory, t int) []Entry {
	lo := 0
	for _, l := range p.Loads() {
		lo = max(lo, l)
	}
	type trial struct {
		per, u, seed, param, ms int
		off                     [][]int
	}
	var trials []trial
	small := min(n, drawnMicro)
	for _, pu := range [][2]int{{lo, 1}, {2*lo + 1, 2}} {
		for start := 1; start <= beladyDrawn; start += listBatch {
			if ctx.Err() != nil {
				return nil
			}
			got := make([][]trial, listBatch)
			var wg sync.WaitGroup
			var pan safego.Panic
			for b := range listBatch {
				seed := start + b
				if seed > beladyDrawn {
					break
				}
				pan.Go(&wg, func() {
					off := drawnOffsets(p, pu[0], pu[1], seed)
					if off == nil {
						return
					}
					o, _ := ordersOf(p, small, pu[0], pu[1], off)
					for k, pr := range drawnParams {
						opt := BeladyOptions{Memory: memory, Horizon: pr.h * t, Lead: pr.l * t / 2, MinLife: pr.life * t, Reserve: pr.reserve}
						if s, err := simulate(p, small, o, opt); err == nil {
							got[b] = append(got[b], trial{pu[0], pu[1], seed, k, schedule.Makespan(s), off})
						}
					}
				})
			}
			wg.Wait()
			pan.Repanic()
			for _, g := range got {
				trials = append(trials, g...)
			}
		}
	}
	slices.SortStableFunc(trials, func(a, b trial) int {
		return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(a.u, b.u), cmp.Compare(a.seed, b.seed), cmp.Compare(a.param, b.param))
	})
	// The drawnKept distinct draws that end first run on all n with every
	// option, as they are and paced.
	var kept []trial
	seen := map[[3]int]bool{}
	for _, tr := range trials {
		key := [3]int{tr.per, tr.u, tr.seed}
		if len(kept) == drawnKept {
			break
		}
		if !seen[key] {
			seen[key] = true
			kept = append(kept, tr)
		}
	}
	params := beladyParams
	var out []Entry
	for _, tr := range kept {
		if ctx.Err() != nil {
			break
		}
		o, times := ordersOf(p, n, tr.per, tr.u, tr.off)
		jobs := make([]beladyJob, 0, 2*len(params))
		for _, pr := range params {
			name := fmt.Sprintf("order/drawn %d period %d/%d", tr.seed, tr.per, tr.u)
			opt := pr.options(memory, t)
			jobs = append(jobs, beladyJob{orders: o, opt: opt, name: name})
			opt.Release = times
			jobs = append(jobs, beladyJob{orders: o, opt: opt, name: name + " paced"})
		}
		out = append(out, runBelady(p, n, jobs)...)
	}
	return out
}

// beladyJob is one simulation: orders timed with opt, its candidate
// named name followed by the options.
type beladyJob struct {
	orders [][]schedule.Ref
	opt    BeladyOptions
	name   string
}

// runBelady runs the jobs side by side and returns the candidates of
// those that finish, in the jobs' order.
func runBelady(p *placement.Placement, n int, jobs []beladyJob) []Entry {
	got := make([]*Entry, len(jobs))
	var wg sync.WaitGroup
	var pan safego.Panic
	for k, j := range jobs {
		pan.Go(&wg, func() {
			s, err := simulate(p, n, j.orders, j.opt)
			if err != nil {
				return
			}
			name := j.name + fmt.Sprintf("/belady h %d lead %d life %d", j.opt.Horizon, j.opt.Lead, j.opt.MinLife)
			if j.opt.Reserve {
				name += " reserve"
			}
			got[k] = &Entry{Name: name, Schedule: s, Makespan: schedule.Makespan(s)}
		})
	}
	wg.Wait()
	pan.Repanic()
	var out []Entry
	for _, c := range got {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}
