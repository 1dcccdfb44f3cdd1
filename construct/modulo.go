package construct

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Periodic is a modulo schedule (software pipelining, with the period as
// the initiation interval and the devices as the resources): micro-batch m
// runs block i at Starts[i] + m·Period. The earliest start is 0.
//
// It is a repetend in the Tessel paper's sense: with σ_i = ⌊s_i/P⌋ (the
// stage of block i), the offsets are n_i = max σ − σ_i and N_R = max σ + 1,
// and iteration k runs B_i^{n_i+k} at (s_i mod P) + k·P. A dependency
// B_i → B_j has s_j ≥ s_i + t_i, so σ_j ≥ σ_i and n_i ≥ n_j (property 4.2).
type Periodic struct {
	Period int
	Starts []int
}

// Offsets are the repetend's micro-batch offsets n_i and N_R.
func (ps *Periodic) Offsets() (offsets []int, nr int) {
	top := 0
	for _, s := range ps.Starts {
		top = max(top, s/ps.Period)
	}
	offsets = make([]int, len(ps.Starts))
	for i, s := range ps.Starts {
		offsets[i] = top - s/ps.Period
	}
	return offsets, top + 1
}

// RepetendStarts are the starts of the repetend's blocks, s_i mod P: with
// Offsets, iteration k runs B_i^{n_i+k} at RepetendStarts[i] + k·P.
func (ps *Periodic) RepetendStarts() []int {
	out := make([]int, len(ps.Starts))
	for i, s := range ps.Starts {
		out[i] = s % ps.Period
	}
	return out
}

// Schedule unrolls n micro-batches of the modulo schedule, compacts them
// (the warmup and the cooldown move earlier where their orders allow) and
// verifies the result under the memory budget. When n ≥ N_R the schedule
// records its repetend if compaction left the iterations exactly
// periodic.
func (ps *Periodic) Schedule(sp spec.Spec) (*schedule.Schedule, error) {
	return ps.schedule(context.Background(), sp)
}

// schedule is Schedule, stopping with ctx's error when ctx ends.
func (ps *Periodic) schedule(ctx context.Context, sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	if err := checkArgs(p, n, memory); err != nil {
		return nil, err
	}
	k := len(p.Blocks)
	if len(ps.Starts) != k || ps.Period < 1 {
		return nil, fmt.Errorf("construct: modulo schedule of %d blocks with period %d for placement %q of %d blocks", len(ps.Starts), ps.Period, p.Name, k)
	}
	starts := make([]int, n*k)
	for m := range n {
		for i, s := range ps.Starts {
			starts[m*k+i] = s + m*ps.Period
		}
	}
	var rp *schedule.Repetend
	if offsets, nr := ps.Offsets(); nr <= n {
		rp = &schedule.Repetend{NR: nr, Period: ps.Period, Offsets: offsets, Iterations: n - nr + 1}
	}
	return finish(ctx, p, n, memory, starts, rp)
}

// linearPeriods is how many periods above the load bound Modulo tries one
// by one before it gallops.
const linearPeriods = 8

// ModuloOptions configure Modulo.
type ModuloOptions struct {
	// Memory is the per-device budget (0: unlimited), checked on the
	// schedule of MicroBatches micro-batches.
	Memory int
	// MicroBatches is N, for the memory check: 0 means 4·N_R of each
	// period tried, enough to reach the steady state.
	MicroBatches int
	// MinPeriod and MaxPeriod bound the periods tried; 0 means max_d
	// load_d and the sequential period (every block of one micro-batch in
	// turn).
	MinPeriod, MaxPeriod int
	// Restarts is how many placements are tried per period; 0 means a
	// number that keeps the work near 20 000 block placements.
	Restarts int
}

// Modulo finds a modulo schedule of p by iterative modulo scheduling
// (Rau, MICRO 1994), trying periods from max_d load_d upward: blocks are
// placed in order of the longest path after them, each at the first time
// after its placed predecessors where all its devices are free modulo the
// period; when none is free within one period, it takes its earliest time
// and evicts the blocks in its way, which are placed again later.
// Restarts perturb the order and the choice of times (see imsRestart). At
// the first period where some placement fits the memory budget (periods
// are tried one by one near the load bound, then in doubling steps and a
// bisection), the one whose micro-batch ends soonest wins (the full schedule ends (N−1)·P
// after its first micro-batch), then the one with least memory. ctx is
// checked between periods.
func Modulo(ctx context.Context, p *placement.Placement, opt ModuloOptions) (*Periodic, error) {
	if err := checkArgs(p, 1, opt.Memory); err != nil {
		return nil, err
	}
	hi := opt.MaxPeriod
	if hi <= 0 {
		hi = 0
		for _, b := range p.Blocks {
			hi += b.Time
		}
	}
	restarts := opt.Restarts
	if restarts <= 0 {
		restarts = min(200, max(1, 20000/len(p.Blocks)))
	}
	st := newIMS(p)
	on := p.DeviceBlocks()
	try := func(P int) *Periodic {
		var best *Periodic
		bestLatency, bestMemory := 0, 0
		seen := map[string]bool{}
		for r := range restarts {
			starts := imsRestart(p, P, st, r)
			if starts == nil {
				continue
			}
			key := fmt.Sprint(starts)
			if seen[key] {
				continue
			}
			seen[key] = true
			peak := steadyMemory(p, on, P, starts)
			total, over := 0, false
			for d, m := range peak {
				total += m
				b := p.Budget(d, opt.Memory)
				over = over || (b > 0 && m > b)
			}
			if over {
				continue
			}
			latency := 0
			for i, s := range starts {
				latency = max(latency, s+p.Blocks[i].Time)
			}
			if best != nil && (latency > bestLatency || (latency == bestLatency && total >= bestMemory)) {
				continue
			}
			ps := &Periodic{Period: P, Starts: starts}
			if !fitsBudget(p, ps, opt.Memory, opt.MicroBatches) {
				continue
			}
			best, bestLatency, bestMemory = ps, latency, total
		}
		return best
	}
	// Periods one by one near the load bound, where most placements find
	// theirs; beyond, steps that double (memory, not the devices, then
	// sets the period) and a bisection back between the last two.
	lo := max(1, rules.LowerBounds(spec.New(p, 0)).Period, opt.MinPeriod) // device and, with channels, link loads
	failed := lo - 1
	for P, step := lo, 1; P <= hi; P += step {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ps := try(P)
		if ps == nil {
			failed = P
			if P-lo >= linearPeriods {
				step *= 2
			}
			continue
		}
		for failed+1 < ps.Period {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			mid := failed + (ps.Period-failed)/2
			if q := try(mid); q != nil {
				ps = q
			} else {
				failed = mid
			}
		}
		return ps, nil
	}
	if ps := try(hi); ps != nil {
		return ps, nil
	}
	return nil, fmt.Errorf("construct: placement %q: no modulo schedule with period ≤ %d fits memory %d", p.Name, hi, opt.Memory)
}

// fitsBudget walks every device's memory over the unrolled schedule.
func fitsBudget(p *placement.Placement, ps *Periodic, memory, n int) bool {
	if !p.Limited(memory) {
		return true
	}
	_, nr := ps.Offsets()
	if n <= 0 {
		n = 4 * nr
	}
	type ev struct{ t, i int }
	for d, on := range p.DeviceBlocks() {
		budget := p.Budget(d, memory)
		if budget <= 0 {
			continue
		}
		evs := make([]ev, 0, n*len(on))
		for m := range n {
			for _, i := range on {
				evs = append(evs, ev{ps.Starts[i] + m*ps.Period, i})
			}
		}
		sort.Slice(evs, func(a, b int) bool { return evs[a].t < evs[b].t })
		sum := 0
		for _, e := range evs {
			sum += p.Blocks[e.i].Memory
			if sum > budget {
				return false
			}
		}
	}
	return true
}

// ims holds what every restart of iterative modulo scheduling shares.
type ims struct {
	preds, succs [][]placement.Dep
	// pre and suc are preds and succs as block indices with their lags.
	pre, suc [][]opDep
	height   []int
	// lag[d] is the least time from the start of B_i to that of B_j for
	// dependency d: Delay, and with channels the transfers B_i sends
	// before d's on the same links (Deps order), which queue ahead of it.
	lag map[placement.Dep]int
	// sends[i] is, per link, how long B_i's transfers hold it from B_i's
	// end (with channels; none without).
	sends []map[placement.Link]int
}

func newIMS(p *placement.Placement) *ims {
	tail := p.Tails()
	height := make([]int, len(p.Blocks))
	for i, b := range p.Blocks {
		height[i] = tail[i] + b.Time
	}
	st := &ims{preds: p.PredDeps(), succs: p.SuccDeps(), height: height, lag: map[placement.Dep]int{}, sends: make([]map[placement.Link]int, len(p.Blocks))}
	// Each block's transfers alone, its links free as it starts: the
	// rule (placement's LinkQueue) gives when each tensor arrives and how
	// long each link is held after the block ends.
	for i, out := range st.succs {
		q := p.NewLinkQueue()
		for _, d := range out {
			st.lag[d], _, _ = q.Arrival(d, 0)
			if !links.Queued(p) {
				continue // Arrival is start + Delay; no link is held
			}
			for _, l := range p.Links(d) {
				if st.sends[i] == nil {
					st.sends[i] = map[placement.Link]int{}
				}
				st.sends[i][l] = q.Free(l) - p.Blocks[i].Time
			}
		}
	}
	st.pre, st.suc = make([][]opDep, len(p.Blocks)), make([][]opDep, len(p.Blocks))
	for i := range p.Blocks {
		for _, d := range st.preds[i] {
			st.pre[i] = append(st.pre[i], opDep{d.From, st.lag[d]})
		}
		for _, d := range st.succs[i] {
			st.suc[i] = append(st.suc[i], opDep{d.To, st.lag[d]})
		}
	}
	return st
}

// imsRestart places every block at period P, or returns nil when its
// budget of placements runs out. Restart 0 is Rau's algorithm: blocks in
// order of height, each at its first free time. Later restarts perturb
// both choices with a generator seeded by the restart number (so every
// run gives the same answer): heights get a random bonus, and a block
// sometimes skips its first free time for a later one. Different
// placements of the same period differ in how long each micro-batch
// holds its activations, hence in memory.
func imsRestart(p *placement.Placement, P int, st *ims, restart int) []int {
	k := len(p.Blocks)
	for i, b := range p.Blocks {
		if b.Time > P {
			return nil
		}
		for _, h := range st.sends[i] {
			if h > P {
				return nil
			}
		}
	}
	rng := newRand(uint64(restart))
	order, skip := imsOrder(st.height, P, restart, imsDraw{spread: 4, skipBase: 100, skipRange: 300}, rng)
	// Resources 0..D−1 are the devices; with channels, the links follow:
	// a block's transfers leave when it ends, one after another, so they
	// never wait for the link and the schedule times them as the rule
	// does (placement's LinkQueue).
	link := map[placement.Link]int{}
	for i := range p.Blocks {
		for l := range st.sends[i] {
			if _, ok := link[l]; !ok {
				link[l] = p.Devices + len(link)
			}
		}
	}
	return imsPlace(imsJob{
		P: P, order: order, skip: skip, rng: rng, pre: st.pre, suc: st.suc,
		resources: p.Devices + len(link), budget: 8 * k * max(4, p.Devices),
		slots: func(i, t int, f func(r, slot int) bool) {
			b := p.Blocks[i]
			for _, d := range b.Devices {
				for u := t; u < t+b.Time; u++ {
					if !f(d, u%P) {
						return
					}
				}
			}
			for l, h := range st.sends[i] {
				for u := t + b.Time; u < t+b.Time+h; u++ {
					if !f(link[l], u%P) {
						return
					}
				}
			}
		},
	})
}

// imsDraw is how a restart after the first perturbs the order: each
// height gets a bonus drawn below spread·P, and skip is skipBase plus a
// draw below skipRange.
type imsDraw struct{ spread, skipBase, skipRange int }

// imsOrder is a restart's order of the operations and its skip: by
// height, highest first, each height with a bonus drawn below spread·P
// after restart 0; skip (per mille: how often a free time is passed
// over) is 0 at restart 0 and skipBase plus a draw below skipRange after.
func imsOrder(height []int, P, restart int, draw imsDraw, rng *rand) (order []int, skip int) {
	spread, skipBase, skipRange := draw.spread, draw.skipBase, draw.skipRange
	prio := make([]int, len(height))
	for i := range prio {
		prio[i] = height[i] * 4
		if restart > 0 {
			prio[i] += rng.intn(spread * P)
		}
	}
	order = make([]int, len(height))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return prio[order[a]] > prio[order[b]] })
	if restart > 0 {
		skip = skipBase + rng.intn(skipRange)
	}
	return order, skip
}

// opDep is a dependency on operation op with the least time lag
// between the two starts.
type opDep struct{ op, lag int }

// imsJob is one placement of iterative modulo scheduling.
type imsJob struct {
	P        int
	order    []int // the operations by priority, highest first
	skip     int   // per mille: how often a free time is passed over
	rng      *rand
	pre, suc [][]opDep
	// resources is how many rows the modulo reservation table has;
	// slots calls f on every (resource, slot) operation i holds when it
	// starts at t, until f returns false.
	resources int
	slots     func(i, t int, f func(r, slot int) bool)
	budget    int // placements before giving up
}

// imsPlace is the placement loop of iterative modulo scheduling (Rau,
// MICRO 1994), shared by imsRestart and the modulo schedules that
// decide: the unplaced operation of highest priority goes to its first
// free time within one period after its placed predecessors (or, with
// skip, sometimes a later free one); where none is free it takes its
// earliest time (past its last one) and evicts what is in its way, and
// successors placed too early are evicted. It returns the starts with
// the earliest at 0, or nil when the budget runs out.
func imsPlace(j imsJob) []int {
	k, P, rng := len(j.order), j.P, j.rng
	sched := make([]int, k)
	placed := make([]bool, k)
	last := make([]int, k) // the last time each operation was placed at
	for i := range last {
		last[i] = -1
	}
	// mrt[r][slot] is the operation that holds resource r at time ≡
	// slot (mod P), or -1.
	mrt := make([][]int, j.resources)
	for r := range mrt {
		mrt[r] = slices.Repeat([]int{-1}, P)
	}
	occupy := func(i, t, who int) {
		j.slots(i, t, func(r, slot int) bool { mrt[r][slot] = who; return true })
	}
	fits := func(i, t int) bool {
		ok := true
		j.slots(i, t, func(r, slot int) bool { ok = mrt[r][slot] < 0; return ok })
		return ok
	}
	unplace := func(x int) {
		placed[x] = false
		occupy(x, sched[x], -1)
	}
	budget := j.budget
	left := k
	for left > 0 {
		if budget == 0 {
			return nil
		}
		budget--
		// The unplaced operation of highest priority.
		i := -1
		for _, x := range j.order {
			if !placed[x] {
				i = x
				break
			}
		}
		est := 0
		for _, d := range j.pre[i] {
			if placed[d.op] {
				est = max(est, sched[d.op]+d.lag)
			}
		}
		t := -1
		for u := est; u < est+P; u++ {
			if fits(i, u) {
				if t < 0 {
					t = u
				}
				if j.skip == 0 || rng.intn(1000) >= j.skip {
					t = u
					break
				}
			}
		}
		if t < 0 {
			t = est
			if last[i] >= est {
				t = last[i] + 1
			}
			// Evict whatever holds the slots i needs.
			var evict []int
			j.slots(i, t, func(r, slot int) bool {
				if x := mrt[r][slot]; x >= 0 && !slices.Contains(evict, x) {
					evict = append(evict, x)
				}
				return true
			})
			for _, x := range evict {
				unplace(x)
				left++
			}
		}
		sched[i], placed[i], last[i] = t, true, t
		occupy(i, t, i)
		left--
		// Successors placed too early for the new time are evicted.
		for _, d := range j.suc[i] {
			if x := d.op; placed[x] && sched[x] < t+d.lag {
				unplace(x)
				left++
			}
		}
	}
	lo := slices.Min(sched)
	for i := range sched {
		sched[i] -= lo
	}
	return sched
}

// steadyMemory is the highest memory of each device in the steady state of
// a modulo schedule: with every earlier micro-batch started, block i has
// run ⌊(τ − s_i)/P⌋ + 1 times by time τ. It is exact where a device's
// memory comes back after each micro-batch, and a lower bound elsewhere.
func steadyMemory(p *placement.Placement, on [][]int, P int, starts []int) []int {
	top := 0
	for _, s := range starts {
		top = max(top, s)
	}
	T := (top/P + 2) * P
	peak := make([]int, len(on))
	for d, blocks := range on {
		best := 0
		for _, j := range blocks {
			tau := T + starts[j]%P
			sum := 0
			for _, i := range blocks {
				if m := p.Blocks[i].Memory; m != 0 {
					sum += m * ((tau-starts[i])/P + 1)
				}
			}
			best = max(best, sum)
		}
		peak[d] = best
	}
	return peak
}

// rand is a small deterministic generator (SplitMix64): the restarts must
// give the same schedules on every run and every platform.
type rand struct{ s uint64 }

func newRand(seed uint64) *rand { return &rand{s: seed*0x9e3779b97f4a7c15 + 1} }

func (r *rand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rand) intn(n int) int { return int(r.next() % uint64(n)) }
