// Package verify is the independent verifier: it checks a schedule
// against the meaning of a schedule, trusting nothing the solver or a
// builder says — the instances, the dependencies, one block per device,
// and every rule of the list rules.All (the memory budget, the latency
// budget, host channels and decisions, links that carry one transfer at a
// time, overlapped pairs), each rule's check in its package under rule/.
package verify

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
)

// Schedule checks s against the meaning of a schedule, trusting nothing but
// its placement, micro-batch count, memory budget and start times: every
// instance B_i^n (i < K, n < N) is present exactly once; starts are in
// 0..MaxStart; every dependency B_i -> B_j has B_j^n start no earlier than
// B_i^n ends plus the transfer time (placement's Delay), and with channels
// no earlier than its tensor arrives after the transfers queued before it
// on its links (placement's LinkQueue); no two instances overlap in time on a device (a block on a device
// group occupies each device of the group); on every device the running
// memory, from 0 and in start order, never exceeds the device's budget
// (placement's Budget: the schedule's Memory and the device's capacity, 0:
// unlimited); with a latency budget, every micro-batch's latency (its first
// block's start to its last block's end, placement's "Latency") is at most
// the budget. When s has a Repetend it must describe the instances; when
// it has Claimed metrics they must equal schedule.Measure's.
//
// The rules beyond the dependencies and one block per device are those of
// rules.All: each rule's Index hook first (in the list's order), then the
// dependencies, every device (its overlaps, then each rule's CheckDevice),
// each rule's Check, the repetend and the claimed metrics.
//
// A schedule with a periodic form (schedule.PeriodicForm) is checked from
// its period and its ends where the rules allow (see "A schedule checked
// from its period"), and as the full schedule otherwise; one whose built
// instances are not its form's (schedule.FormHolds) is checked from its
// instances alone.
//
// The result is nil or a *schedule.VerifyError listing every violation. Runs in
// O(I log I) for I instances.
func Schedule(s *schedule.Schedule) error {
	r := &rule.Report{}
	if s == nil {
		r.Add(schedule.Input, -1, nil, "no schedule")
		return r.Err()
	}
	p := s.Placement
	if p == nil {
		r.Add(schedule.Input, -1, nil, "no placement")
		return r.Err()
	}
	if err := p.Validate(); err != nil {
		r.Add(schedule.Input, -1, nil, "invalid placement: %v", err)
		return r.Err()
	}
	if s.Cluster != nil {
		if s.Given == nil {
			r.Add(schedule.Input, -1, nil, "a cluster without the placement it was applied to")
			return r.Err()
		}
		q, err := s.Cluster.Apply(s.Given)
		if err != nil {
			r.Add(schedule.Input, -1, nil, "placement on the cluster: %v", err)
			return r.Err()
		}
		if !q.Equal(p) {
			r.Add(schedule.Input, -1, nil, "the placement is not the source placement on the cluster")
			return r.Err()
		}
	}
	if s.MicroBatches < 1 || s.MicroBatches > schedule.MaxMicroBatches {
		r.Add(schedule.Input, -1, nil, "micro-batch count %d out of range 1..%d", s.MicroBatches, schedule.MaxMicroBatches)
		return r.Err()
	}
	if s.Memory < 0 {
		r.Add(schedule.Input, -1, nil, "memory budget %d is negative (0 means unlimited)", s.Memory)
		return r.Err()
	}
	if s.Latency < 0 {
		r.Add(schedule.Input, -1, nil, "latency budget %d is negative (0 means none)", s.Latency)
		return r.Err()
	}
	if schedule.FormHolds(s) {
		periodic(s, r)
		return r.Err()
	}
	c := rule.NewChecked(s)
	presence(c, r)
	list := rules.All()
	for _, rl := range list {
		if ix, ok := rl.(rule.Indexer); ok {
			ix.Index(c, r)
		}
	}
	dependencies(c, r)
	devices(c, r, list)
	for _, rl := range list {
		rl.Check(c, r)
	}
	repetend(c, r)
	claimed(c, r)
	return r.Err()
}

// presence checks ranges, duplicates and missing instances.
func presence(c *rule.Checked, r *rule.Report) {
	s := c.S
	k, n := len(s.Placement.Blocks), s.MicroBatches
	for x, in := range s.Instances {
		ref := in.Ref()
		switch {
		case in.Block < 0 || in.Block >= k:
			r.Add(schedule.OutOfRange, -1, []schedule.Ref{ref}, "instance %d: block index %d out of range 0..%d", x, in.Block, k-1)
			continue
		case in.Micro < 0 || in.Micro >= n:
			r.Add(schedule.OutOfRange, -1, []schedule.Ref{ref}, "instance %d: %s: micro-batch %d out of range 0..%d", x, c.Name(ref), in.Micro, n-1)
			continue
		case in.Start < 0:
			r.Add(schedule.Start, -1, []schedule.Ref{ref}, "%s starts at %d < 0", c.Name(ref), in.Start)
			continue
		case in.Start > schedule.MaxStart:
			r.Add(schedule.Start, -1, []schedule.Ref{ref}, "%s starts at %d > %d", c.Name(ref), in.Start, schedule.MaxStart)
			continue
		}
		if y, dup := c.First[ref]; dup {
			r.Add(schedule.Duplicate, -1, []schedule.Ref{ref}, "%s given twice: at %d (instance %d) and at %d (instance %d)", c.Name(ref), s.Instances[y].Start, y, in.Start, x)
			continue
		}
		c.First[ref] = x
		c.OK[x] = true
	}
	// Missing instances, in block then micro-batch order. Only the first
	// few are named, so the walk stops early; the rest are counted.
	missing := k*n - len(c.First)
	if missing == 0 {
		return
	}
	named := 0
	for i := 0; i < k && named < schedule.MaxViolations+1 && named < missing; i++ {
		for m := 0; m < n && named < schedule.MaxViolations+1; m++ {
			ref := schedule.Ref{Block: i, Micro: m}
			if _, ok := c.First[ref]; !ok {
				r.Add(schedule.Missing, -1, []schedule.Ref{ref}, "%s missing", c.Name(ref))
				named++
			}
		}
	}
	for ; named < missing; named++ {
		r.Omit()
	}
}

// dependencies checks, for every dependency i -> j and every micro-batch n
// where both are present, that B_j^n starts no earlier than B_i^n's
// tensor arrives: B_i^n's start plus the placement's Delay (its end plus
// the transfer time), and with channels after the transfers queued before
// it on the same links (placement's LinkQueue). The message names the
// transfer only when there is one, and the link when it waited.
func dependencies(c *rule.Checked, r *rule.Report) {
	s := c.S
	p := s.Placement
	preds := p.PredDeps()
	arrivals := c.Arrivals
	for x, in := range s.Instances {
		if !c.OK[x] || c.First[in.Ref()] != x {
			continue
		}
		// Checked from the successor's side, so that the order of the
		// report follows the instances.
		for _, d := range preds[in.Block] {
			from := schedule.Ref{Block: d.From, Micro: in.Micro}
			y, ok := c.First[from]
			if !ok {
				continue // reported as missing
			}
			if c.Pairs.Together(from, in.Ref()) {
				continue // one overlapped action: the pair's own order
			}
			a, queued := arrivals[placement.LinkTransfer{Dep: d, Micro: in.Micro}]
			if !queued {
				a.At = s.Instances[y].Start + p.Delay(d) - p.Blocks[d.From].Time + c.Pairs.Duration(p, from)
			}
			if a.At <= in.Start {
				continue
			}
			fb, tb := p.Blocks[d.From].ID, p.Blocks[d.To].ID
			t := p.Transfer(d)
			switch {
			case a.Waited > 0:
				r.Add(schedule.Dependency, -1, []schedule.Ref{from, in.Ref()},
					"dependency %s -> %s broken for micro-batch %d: %s ends at %d, its transfer waits %d for link %d->%d and takes %d, %s starts at %d < %d",
					fb, tb, in.Micro, c.Name(from), c.End(y), a.Waited, a.Busy.From, a.Busy.To, t, c.Name(in.Ref()), in.Start, a.At)
			case t != 0:
				r.Add(schedule.Dependency, -1, []schedule.Ref{from, in.Ref()},
					"dependency %s -> %s broken for micro-batch %d: %s ends at %d and its transfer takes %d, %s starts at %d < %d",
					fb, tb, in.Micro, c.Name(from), c.End(y), t, c.Name(in.Ref()), in.Start, a.At)
			default:
				r.Add(schedule.Dependency, -1, []schedule.Ref{from, in.Ref()},
					"dependency %s -> %s broken for micro-batch %d: %s ends at %d, %s starts at %d",
					fb, tb, in.Micro, c.Name(from), a.At, c.Name(in.Ref()), in.Start)
			}
		}
	}
}

// devices checks, per device in start order, that no two instances (a
// recompute counting as one) overlap, then each rule's check of the
// device (the memory budget).
func devices(c *rule.Checked, r *rule.Report, list []rule.Rule) {
	c.Devices = schedule.DeviceInstances(c.S, c.OK)
	for d, xs := range c.Devices {
		if d >= len(c.Reruns) || len(c.Reruns[d]) == 0 {
			overlaps(c, r, d, xs)
		} else {
			overlapsWithReruns(c, r, d, xs, c.Reruns[d])
		}
		for _, rl := range list {
			if dc, ok := rl.(rule.DeviceChecker); ok {
				dc.CheckDevice(c, r, d)
			}
		}
	}
}

// overlaps reports every instance that starts before the latest end among
// the instances started before it on device d, naming that one.
func overlaps(c *rule.Checked, r *rule.Report, d int, xs []int) {
	last, lastEnd := -1, math.MinInt
	for _, x := range xs {
		if c.Pairs.Follower(c.S.Instances[x].Ref()) {
			continue // its pair's forward occupies the device for both
		}
		if c.S.Instances[x].Start < lastEnd {
			a, b := c.S.Instances[last].Ref(), c.S.Instances[x].Ref()
			r.Add(schedule.Overlap, d, []schedule.Ref{a, b}, "overlap on device %d: %s %s and %s %s",
				d, c.Name(a), c.Span(last), c.Name(b), c.Span(x))
		}
		if e := c.End(x); e > lastEnd {
			last, lastEnd = x, e
		}
	}
}

// repetend checks that s.Repetend, if any, describes the instances:
// iteration k (0 ≤ k < Iterations) runs B_i^{Offsets[i]+k} at
// Start + s_i + k·Period, with s_i taken from iteration 0, whose earliest
// instance starts at Start.
func repetend(c *rule.Checked, r *rule.Report) {
	rp := c.S.Repetend
	if rp == nil {
		return
	}
	if err := checkRepetendShape(c.S, rp); err != nil {
		r.Add(schedule.RepetendMismatch, -1, nil, "repetend: %v", err)
		return
	}
	p := c.S.Placement
	first := math.MaxInt
	base := make([]int, len(p.Blocks))
	for i := range p.Blocks {
		x, ok := c.First[schedule.Ref{Block: i, Micro: rp.Offsets[i]}]
		if !ok {
			return // reported as missing
		}
		base[i] = c.S.Instances[x].Start
		first = min(first, base[i])
	}
	if first != rp.Start {
		r.Add(schedule.RepetendMismatch, -1, nil, "repetend: first iteration starts at %d, not %d", first, rp.Start)
	}
	for k := 1; k < rp.Iterations; k++ {
		for i := range p.Blocks {
			ref := schedule.Ref{Block: i, Micro: rp.Offsets[i] + k}
			x, ok := c.First[ref]
			if !ok {
				continue
			}
			want := base[i] + k*rp.Period
			if got := c.S.Instances[x].Start; got != want {
				r.Add(schedule.RepetendMismatch, -1, []schedule.Ref{ref}, "repetend iteration %d: %s starts at %d, not %d (%s^%d at %d + %d·period %d)",
					k, c.Name(ref), got, want, p.Blocks[i].ID, rp.Offsets[i], base[i], k, rp.Period)
			}
		}
	}
}

// checkRepetendShape checks the repetend's numbers against the placement
// and the micro-batch count.
func checkRepetendShape(s *schedule.Schedule, rp *schedule.Repetend) error {
	k, n := len(s.Placement.Blocks), s.MicroBatches
	switch {
	case rp.NR < 1 || rp.NR > n:
		return fmt.Errorf("nr %d out of range 1..%d", rp.NR, n)
	case rp.Period < 1:
		return fmt.Errorf("period %d < 1", rp.Period)
	case rp.Iterations < 1 || rp.Iterations > n:
		return fmt.Errorf("iterations %d out of range 1..%d", rp.Iterations, n)
	case len(rp.Offsets) != k:
		return fmt.Errorf("%d offsets for %d blocks", len(rp.Offsets), k)
	}
	for i, o := range rp.Offsets {
		id := s.Placement.Blocks[i].ID
		if o < 0 || o >= rp.NR {
			return fmt.Errorf("offset of %s is %d, out of range 0..%d", id, o, rp.NR-1)
		}
		if o+rp.Iterations > n {
			return fmt.Errorf("%d iterations from offset %d of %s run past micro-batch %d", rp.Iterations, o, id, n-1)
		}
	}
	return nil
}

// claimed compares the metrics a file claims with the measured ones.
func claimed(c *rule.Checked, r *rule.Report) {
	cl := c.S.Claimed
	if cl == nil {
		return
	}
	claimedAgainst(cl, schedule.Measure(c.S), r)
}

// overlapsWithReruns is overlaps on a device that also runs recomputes.
func overlapsWithReruns(c *rule.Checked, r *rule.Report, d int, xs []int, reruns []schedule.Rerun) {
	type busy struct {
		ref        schedule.Ref
		start, end int
		again      bool
		x          int
	}
	p := c.S.Placement
	var items []busy
	for _, x := range xs {
		in := c.S.Instances[x]
		items = append(items, busy{in.Ref(), in.Start, c.End(x), false, x})
	}
	for _, rr := range reruns {
		items = append(items, busy{rr.Ref, rr.Start, rr.Start + p.Blocks[rr.Ref.Block].Time, true, -1})
	}
	slices.SortFunc(items, func(a, b busy) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.ref.Block, b.ref.Block), cmp.Compare(a.ref.Micro, b.ref.Micro),
			cmpBool(a.again, b.again), cmp.Compare(a.x, b.x))
	})
	name := func(b busy) string {
		if b.again {
			return "the recompute of " + c.Name(b.ref)
		}
		return c.Name(b.ref)
	}
	var last busy
	lastEnd := math.MinInt
	for _, b := range items {
		if b.start < lastEnd {
			r.Add(schedule.Overlap, d, []schedule.Ref{last.ref, b.ref}, "overlap on device %d: %s [%d,%d) and %s [%d,%d)",
				d, name(last), last.start, last.end, name(b), b.start, b.end)
		}
		if b.end > lastEnd {
			last, lastEnd = b, b.end
		}
	}
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
