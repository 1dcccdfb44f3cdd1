package schedule

import (
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/placement"
)

// Stretch is an exactly periodic part of a schedule: from time Start, for
// Iterations windows of length Period, window k+1 runs the instances
// that start in window k, PerPeriod micro-batches later and Period time
// units later. A stretch of a schedule built from a repetend has
// PerPeriod 1 and every block in its window.
type Stretch struct {
	Start, Period, PerPeriod, Iterations int
	// NR is the number of micro-batches with an instance starting in
	// one window (the repetend's N_R where the stretch is one).
	NR int
	// Blocks lists, by index, the blocks that start in one window.
	Blocks []int
	// Busy is the device-time of the instances starting in one window
	// (a block on g devices counts g times its time).
	Busy int
}

// End is the time the stretch ends: Start + Iterations·Period.
func (st Stretch) End() int { return st.Start + st.Iterations*st.Period }

// SteadyState is what a schedule does once it repeats: the longest
// exactly periodic stretch of its start times (Main), and, where that
// stretch leaves blocks out, the stretches before and after it that run
// them, every block in exactly one. Period is the time PerPeriod more
// micro-batches add to the stretches together — what the schedule's
// makespan grows by for PerPeriod more micro-batches, if it was built
// the same way for them — and BubbleRate
// the idle share of the devices over it: the bubble rate of the whole
// schedule as N grows. NR is Main's.
type SteadyState struct {
	Main      Stretch
	Stretches []Stretch // in time order, Main among them
	// Period, PerPeriod and BubbleRate are over all the stretches.
	Period, PerPeriod, NR int
	BubbleRate            float64
}

// maxPerPeriod caps the micro-batches of one window that Steady tries.
const maxPerPeriod = 64

// Steady finds the steady state of s from its start times alone (s.Repetend
// is not read): the longest stretch, in time, over which the schedule
// repeats exactly with some period and some number of micro-batches per
// period, at least two windows long; then, for the blocks it leaves out,
// the longest stretches before and after it. It returns nil when s has
// no such stretches (fewer than three micro-batches, no repetition, or
// blocks that run in none).
// The schedule must be valid.
func Steady(s *Schedule) *SteadyState {
	return steady(s, nil)
}

// steady is Steady with the micro-batches per window restricted to those
// qok accepts (nil: any).
func steady(s *Schedule, qok func(int) bool) *SteadyState {
	if s == nil || s.Placement == nil || s.MicroBatches < 3 {
		return nil
	}
	p, n, k := s.Placement, s.MicroBatches, len(s.Placement.Blocks)
	start := make([][]int, k)
	for i := range start {
		start[i] = make([]int, n)
		for m := range start[i] {
			start[i][m] = -1
		}
	}
	for _, in := range s.Instances {
		if in.Block < 0 || in.Block >= k || in.Micro < 0 || in.Micro >= n || start[in.Block][in.Micro] >= 0 {
			return nil
		}
		start[in.Block][in.Micro] = in.Start
	}
	for i := range start {
		for m := range start[i] {
			if start[i][m] < 0 {
				return nil
			}
		}
	}
	ins := slices.Clone(s.Instances)
	sort.SliceStable(ins, func(a, b int) bool { return ins[a].Start < ins[b].Start })
	d := &detector{p: p, n: n, start: start, ins: ins, pg: newPairing(s, nil), qok: qok}
	end := Makespan(s)
	main, ok := d.longest(0, end+1, nil)
	if !ok {
		return nil
	}
	st := &SteadyState{Main: main, Stretches: []Stretch{main}}
	covered := map[int]bool{}
	for _, i := range main.Blocks {
		covered[i] = true
	}
	// The blocks Main leaves out, from the stretches beside it: each
	// gap's longest, taken while it runs only blocks not yet covered.
	for len(covered) < k {
		found := false
		lo := 0
		for _, x := range append(slices.Clone(st.Stretches), Stretch{Start: end + 1}) {
			if x.Start > lo {
				if c, ok := d.longest(lo, x.Start, covered); ok {
					st.Stretches = append(st.Stretches, c)
					for _, i := range c.Blocks {
						covered[i] = true
					}
					found = true
					break
				}
			}
			lo = x.End()
		}
		if !found {
			break
		}
		sort.Slice(st.Stretches, func(a, b int) bool { return st.Stretches[a].Start < st.Stretches[b].Start })
	}
	st.NR = main.NR
	if len(covered) == k && d.disjoint(st.Stretches) {
		q := 1
		for _, x := range st.Stretches {
			q = lcm(q, x.PerPeriod)
		}
		period, busy := 0, 0
		for _, x := range st.Stretches {
			period += x.Period * q / x.PerPeriod
			busy += x.Busy * q / x.PerPeriod
		}
		st.Period, st.PerPeriod = period, q
		st.BubbleRate = bubble(p.Devices, period, busy)
		return st
	}
	// The stretches leave blocks out (or run one twice): no steady state
	// of the whole schedule.
	return nil
}

// bubble is the idle share of d devices over period with busy device-time.
func bubble(d, period, busy int) float64 {
	total := float64(d) * float64(period)
	return (total - float64(busy)) / total
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// interval is the times [lo, hi).
type interval struct{ lo, hi int }

// detector holds a schedule's start times for Steady.
type detector struct {
	p     *placement.Placement
	n     int
	start [][]int    // start[block][micro]
	ins   []Instance // by start
	pg    *pairing   // overlapped pairs: a pair's time counts once
	seen  []bool     // window's set of blocks, cleared after each use
	// fwd and bwd are stretch's buffers.
	fwd, bwd []int
	// qok, when set, says which micro-batches per window to try.
	qok func(int) bool
}

// disjoint reports whether no block runs in two of the stretches.
func (d *detector) disjoint(sts []Stretch) bool {
	seen := map[int]bool{}
	for _, x := range sts {
		for _, i := range x.Blocks {
			if seen[i] {
				return false
			}
			seen[i] = true
		}
	}
	return true
}

// longest is the longest exactly periodic stretch within [lo, hi) made of
// the instances starting there, at least two windows long, none of whose
// blocks is in skip (nil: any); ok is false when there is none. Longer in
// time wins; between two of the same time per micro-batch, the one with
// fewer micro-batches per window unless the other is longer by more than
// one of its windows; then the earlier.
func (d *detector) longest(lo, hi int, skip map[int]bool) (best Stretch, ok bool) {
	in := d.ins[startsFrom(d.ins, lo):startsFrom(d.ins, hi)] // d.ins is sorted by start
	if len(in) == 0 {
		return best, false
	}
	for q := 1; 2*q <= d.n && q <= maxPerPeriod; q++ {
		if d.qok != nil && !d.qok(q) {
			continue
		}
		for _, P := range d.periods(in, q) {
			c, found := d.stretch(in, interval{lo, hi}, P, q, skip)
			if !found {
				continue
			}
			if !ok {
				best, ok = c, true
				continue
			}
			lc, lb := c.Iterations*c.Period, best.Iterations*best.Period
			sameRate := c.Period*best.PerPeriod == best.Period*c.PerPeriod
			switch {
			case sameRate && c.PerPeriod > best.PerPeriod:
				if lc > lb+c.Period {
					best = c
				}
			case lc > lb:
				best = c
			}
		}
	}
	return best, ok
}

// periods are the candidate periods for q micro-batches per window: the
// most common difference start(B_i^{m+q}) − start(B_i^m) over the
// instances in, the smallest on a tie.
func (d *detector) periods(in []Instance, q int) []int {
	count := map[int]int{}
	for _, x := range in {
		if x.Micro+q < d.n {
			if g := d.start[x.Block][x.Micro+q] - x.Start; g > 0 {
				count[g]++
			}
		}
	}
	P, best := 0, 0
	for g, c := range count {
		if c > best || (c == best && g < P) {
			P, best = g, c
		}
	}
	if P == 0 {
		return nil
	}
	return []int{P}
}

// stretch is the longest stretch of period P and q micro-batches per
// window made of the instances in (sorted by start, all in [lo, hi)).
func (d *detector) stretch(in []Instance, iv interval, P, q int, skip map[int]bool) (best Stretch, ok bool) {
	lo, hi := iv.lo, iv.hi
	// An instance breaks forwards when its image q micro-batches later
	// does not start P later (within [lo, hi)), backwards when its
	// preimage does not start P earlier.
	fwd, bwd := d.fwd[:0], d.bwd[:0]           // starts, sorted
	defer func() { d.fwd, d.bwd = fwd, bwd }() // reused by the next call
	for _, x := range in {
		if m := x.Micro + q; m >= d.n || d.start[x.Block][m] != x.Start+P || x.Start+P >= hi {
			fwd = append(fwd, x.Start)
		}
		if m := x.Micro - q; m < 0 || d.start[x.Block][m] != x.Start-P || x.Start-P < lo {
			bwd = append(bwd, x.Start)
		}
	}
	inf := int(^uint(0) >> 2)
	first := func(xs []int, t int) int {
		j := sort.SearchInts(xs, t)
		if j == len(xs) {
			return inf
		}
		return xs[j]
	}
	bestLen := 0
	for j, x := range in {
		T := x.Start
		if j > 0 && in[j-1].Start == T {
			continue
		}
		// No forward break in [T, T+(k−1)P), no backward break in
		// [T+P, T+kP), and the windows within [lo, hi).
		iters := (hi - T) / P
		if f := first(fwd, T); f != inf {
			iters = min(iters, (f-T)/P+1)
		}
		if b := first(bwd, T+P); b != inf {
			iters = min(iters, (b-T)/P)
		}
		if iters < 2 || iters*P <= bestLen {
			continue
		}
		c := d.aligned(in, d.window(in, T, P, q, iters))
		if skip != nil && slices.ContainsFunc(c.Blocks, func(i int) bool { return skip[i] }) {
			continue
		}
		best, ok, bestLen = c, true, iters*P
	}
	return best, ok
}

// aligned moves the stretch's first window to the start, among those of
// its first window's instances, where one window spans the fewest
// micro-batches (the stretch's N_R does not depend on where a reader
// starts counting), giving up the last window where it moves; it keeps
// at least two.
func (d *detector) aligned(in []Instance, c Stretch) Stretch {
	if c.Iterations < 3 {
		return c
	}
	best := c
	for _, x := range in[startsFrom(in, c.Start+1):] {
		if x.Start >= c.Start+c.Period {
			break // in is sorted by start
		}
		if x.Start == best.Start {
			continue
		}
		if w := d.window(in, x.Start, c.Period, c.PerPeriod, c.Iterations-1); w.NR < best.NR {
			best = w
		}
	}
	return best
}

// startsFrom is the index of the first instance of in (sorted by start)
// that starts at t or later: the windows look at a span of starts only,
// not at every instance (which made Steady quadratic in the instances).
func startsFrom(in []Instance, t int) int {
	return sort.Search(len(in), func(i int) bool { return in[i].Start >= t })
}

// window describes the stretch from T of period P, q micro-batches per
// window and iters windows, from the instances starting in its first
// window.
func (d *detector) window(in []Instance, T, P, q, iters int) Stretch {
	c := Stretch{Start: T, Period: P, PerPeriod: q, Iterations: iters}
	lo, hi := d.n, -1
	if d.seen == nil {
		d.seen = make([]bool, len(d.p.Blocks))
	}
	for _, x := range in[startsFrom(in, T):] {
		if x.Start >= T+P {
			break // in is sorted by start
		}
		lo, hi = min(lo, x.Micro), max(hi, x.Micro)
		if !d.seen[x.Block] {
			d.seen[x.Block] = true
			c.Blocks = append(c.Blocks, x.Block)
		}
		if !d.pg.follower(x.Ref()) {
			c.Busy += d.pg.dur(d.p, x.Ref()) * len(d.p.Blocks[x.Block].Devices)
		}
	}
	for _, i := range c.Blocks {
		d.seen[i] = false
	}
	c.NR = hi - lo + 1
	sort.Ints(c.Blocks)
	return c
}

// SteadyOf is the steady state of s as every report gives it: that of
// the repetend s records (s.Repetend, which verify.Schedule checks against the
// instances) when it has at least two iterations, else Steady's. nil
// when s has none.
func SteadyOf(s *Schedule) *SteadyState {
	if s == nil || s.Placement == nil {
		return nil
	}
	if st := RecordedSteady(s); st != nil {
		return st
	}
	return Steady(s)
}

// SteadyLimit is the most instances SteadyWithin looks through: Steady's
// time grows faster than the instances (a schedule of 1000 devices and
// 128 micro-batches took seconds), and a report must not spend it.
const SteadyLimit = 1 << 16

// SteadyWithin is SteadyOf(s) where it is found in bounded time: from
// the repetend s records, or by Steady where s has at most SteadyLimit
// instances; sought is false where it was not looked for.
func SteadyWithin(s *Schedule) (st *SteadyState, sought bool) {
	if st := RecordedSteady(s); st != nil {
		return st, true
	}
	if s == nil || len(s.Instances) > SteadyLimit {
		return nil, false
	}
	return Steady(s), true
}

// RecordedSteady is SteadyOf where s records a repetend of at least two
// iterations (and no pairs: with pairs, the busy time of a period is the
// schedule's), nil otherwise: found from the repetend alone, in time
// that does not grow with N.
func RecordedSteady(s *Schedule) *SteadyState {
	if s == nil || s.Placement == nil {
		return nil
	}
	rp := s.Repetend
	if rp == nil || rp.Iterations < 2 || rp.Period < 1 || len(rp.Offsets) != len(s.Placement.Blocks) || len(s.Pairs) > 0 {
		return nil
	}
	busy := 0
	for _, l := range s.Placement.Loads() {
		busy += l
	}
	blocks := make([]int, len(s.Placement.Blocks))
	for i := range blocks {
		blocks[i] = i
	}
	main := Stretch{Start: rp.Start, Period: rp.Period, PerPeriod: 1, Iterations: rp.Iterations, NR: rp.Span(), Blocks: blocks, Busy: busy}
	return &SteadyState{Main: main, Stretches: []Stretch{main}, Period: rp.Period, PerPeriod: 1, NR: main.NR,
		BubbleRate: RepetendBubbleRate(s.Placement, rp.Period)}
}

// TimePerMicroBatch is Period / PerPeriod: the time one more micro-batch
// adds in the steady state.
func (st *SteadyState) TimePerMicroBatch() float64 {
	return float64(st.Period) / float64(st.PerPeriod)
}
