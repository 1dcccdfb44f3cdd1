package verify

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
)

// # A schedule checked from its period
//
// A schedule with a periodic form (schedule.PeriodicForm: a head, a
// period repeated R times, each repetition Shift = (P, Q) later in time
// and micro-batch, and a tail) is checked without building its N × K
// instances. Write F_r for the form with r repetitions and its tail moved
// back by the R − r left out (schedule.Resized): F_R is the schedule.
//
// Every check is about instances that share a micro-batch (dependencies,
// the latency budget) or a device near in time (one block per device; the
// memory budget, a running sum in start order). Repetition r of the
// period is repetition 0 moved by r·(P, Q), so two instances of
// repetitions r and r' stand in the same relation — the same gap in
// time, the same micro-batch or not, the same order of starts — as those
// of repetitions r+j and r'+j. Horizon (R0) bounds how many repetitions
// the head reaches (H: the first repetition that starts after every head
// instance ends and whose micro-batches lie above the head's), how many
// reach the tail (T, likewise), how many one repetition's instances span
// in time (W) and one micro-batch's span (M); R0 = 2(H+T+W+M)+2. For
// r ≥ R0:
//
//   - a micro-batch of F_r has its instances in the head and the first
//     H+M repetitions, or in M consecutive middle repetitions, or in the
//     last T+M and the tail: each kind is a copy, moved by whole
//     repetitions, of a micro-batch of F_R0 (never head and tail both:
//     they are R0 − H − T > M repetitions apart). So the dependencies and
//     latencies of F_r are those of F_R0;
//   - two instances on a device overlap only within W repetitions of
//     each other, or head and the first H, or the last T and the tail:
//     again copies of pairs of F_R0;
//   - the running memory at an instance's start is what starts before
//     it: the whole head, the whole repetitions more than W before (each
//     adding the period's net memory on the device), the nearby ones as
//     in F_R0, and no tail (or, near the tail, the mirror image). Where
//     the period's net memory on every device is 0 (checked: the memories
//     of the period's instances on each device sum to 0), each running
//     memory of F_r is one of F_R0 and conversely: the budget holds and
//     the peaks are equal.
//
// So F_R is valid if F_R0 is and every (block, micro-batch) of F_R is
// present once (checked directly, one bit each). F_R0 and F_R0+1 are both
// verified in full (verify.Schedule), the second as a guard on the count
// of H, T, W and M. The argument covers the dependencies with fixed
// transfer times, one block per device, memory and latency: a form whose
// schedule has decisions, overlapped pairs, link orders, queued links
// (channels) or sharded stages, whose period's net memory is not 0, or
// whose R is at most R0 + 1, or that names a repetend (a periodic file
// has none), is verified as the full schedule (materialised, within the
// instance limit). The claimed metrics are recomputed (schedule.Measure,
// which uses the same argument), never trusted.

// periodic verifies s from its periodic form, into r.
func periodic(s *schedule.Schedule, r *rule.Report) {
	f := s.Periodic
	if err := f.Check(s); err != nil {
		r.Add(schedule.Input, -1, nil, "%v", err)
		return
	}
	if !formPresence(s, r) {
		return
	}
	r0 := horizon(s)
	if r0 == 0 || s.Repetend != nil { // a repetend is checked on the instances
		full, err := s.Materialize(context.Background())
		if err != nil {
			r.Add(schedule.Input, -1, nil, "%v", err)
			return
		}
		collect(r, Schedule(withoutForm(full)), "")
		return
	}
	for _, n := range []int{r0, r0 + 1} {
		collect(r, Schedule(s.Resized(n)), fmt.Sprintf("with %d repetitions of the period: ", n))
	}
	if cl := s.Claimed; cl != nil {
		claimedAgainst(cl, schedule.Measure(s), r)
	}
}

// horizon is the repetitions R0 from which s, a periodic schedule whose
// form passed Check and whose instances are in range, is checked from
// its period; 0 where it is checked in full (not checkable, or R ≤ R0+1).
func horizon(s *schedule.Schedule) int {
	if !schedule.PeriodicCheckable(s) {
		return 0
	}
	if r0 := s.Periodic.Horizon(s.Placement); r0+1 < s.Periodic.Repetitions {
		return r0
	}
	return 0
}

// FromPeriod reports whether Schedule checks s from its period, without
// building its instances (see "A schedule checked from its period"). s
// must be valid.
func FromPeriod(s *schedule.Schedule) bool {
	return s != nil && schedule.FormHolds(s) && s.Repetend == nil && s.Periodic.Check(s) == nil && horizon(s) > 0
}

// withoutForm is full (materialised) as a schedule of instances alone,
// its claims kept.
func withoutForm(full *schedule.Schedule) *schedule.Schedule {
	c := *full
	c.Periodic = nil
	return &c
}

// collect adds the violations of err (a *schedule.VerifyError or nil)
// to r, each message after prefix.
func collect(r *rule.Report, err error, prefix string) {
	ve, ok := err.(*schedule.VerifyError)
	if !ok {
		return
	}
	for _, v := range ve.Violations {
		r.Add(v.Kind, v.Device, v.Instances, "%s%s", prefix, v.Message)
	}
	for range ve.Omitted {
		r.Omit()
	}
}

// formPresence checks, from the form, that every instance of the full
// schedule names a block and micro-batch in range, starts in
// 0..MaxStart, and that each (block, micro-batch) is there once: one bit
// each, the instances never built.
func formPresence(s *schedule.Schedule, r *rule.Report) bool {
	k, n := len(s.Placement.Blocks), s.MicroBatches
	seen := make([]uint64, (k*n+63)/64)
	ok := true
	name := func(in schedule.Instance) string { return s.Placement.Blocks[in.Block].ID }
	s.Periodic.Each(func(in schedule.Instance) bool {
		switch {
		case in.Block < 0 || in.Block >= k:
			r.Add(schedule.OutOfRange, -1, []schedule.Ref{in.Ref()}, "block index %d out of range 0..%d", in.Block, k-1)
		case in.Micro < 0 || in.Micro >= n:
			r.Add(schedule.OutOfRange, -1, []schedule.Ref{in.Ref()}, "%s: micro-batch %d out of range 0..%d", name(in), in.Micro, n-1)
		case in.Start < 0 || in.Start > schedule.MaxStart:
			r.Add(schedule.Start, -1, []schedule.Ref{in.Ref()}, "%s^%d starts at %d, out of range 0..%d", name(in), in.Micro, in.Start, schedule.MaxStart)
		default:
			x := in.Micro*k + in.Block
			if seen[x/64]&(1<<(x%64)) != 0 {
				r.Add(schedule.Duplicate, -1, []schedule.Ref{in.Ref()}, "%s^%d given twice", name(in), in.Micro)
			} else {
				seen[x/64] |= 1 << (x % 64)
				return true
			}
		}
		ok = false
		return true
	})
	// Every instance in range and none twice, with as many as N·K
	// (Check): none is missing.
	return ok
}

// claimedAgainst compares claimed metrics with measured ones m.
func claimedAgainst(cl *schedule.Claimed, m schedule.Metrics, r *rule.Report) {
	if cl.Makespan != m.Makespan {
		r.Add(schedule.MetricsMismatch, -1, nil, "metrics: makespan %d claimed, measured %d", cl.Makespan, m.Makespan)
	}
	if math.Abs(cl.BubbleRate-schedule.RoundRate(m.BubbleRate)) > 1e-6 || math.IsNaN(cl.BubbleRate) {
		r.Add(schedule.MetricsMismatch, -1, nil, "metrics: bubble rate %g claimed, measured %g", cl.BubbleRate, schedule.RoundRate(m.BubbleRate))
	}
	if !slices.Equal(cl.PeakMemory, m.PeakMemory) {
		r.Add(schedule.MetricsMismatch, -1, nil, "metrics: peak memory %s claimed, measured %s", schedule.IntList(cl.PeakMemory), schedule.IntList(m.PeakMemory))
	}
}
