package schedule

import (
	"context"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// # A schedule written by its period
//
// A schedule extended from a window (Extension) is its head, one period
// repeated many times, and its tail: the Tessel paper's repetend with its
// warmup and cooldown (Lin et al., "Tessel: Boosting Distributed
// Execution of Large DNN Models via Flexible Schedule Search"). Beyond
// PeriodicInstances instances tessel keeps, writes and verifies such a
// schedule in that form (PeriodicForm), so that its cost follows the
// window, not N; the full schedule is materialised only where a reader
// needs its instances (docs/formats.md, "Periodic schedule file").

// PeriodicInstances is the number of instances (N × blocks) above which
// a search's extended answer carries its periodic form and is written as
// a periodic file; at or below it every output is the full schedule.
const PeriodicInstances = 1 << 20

// Shift is how far each repetition of a period moves its instances.
type Shift struct {
	Time  int
	Micro int
}

// PeriodicForm is a schedule's instances as Head, then Period repeated
// Repetitions times (repetition r moves every instance of Period by r
// times Shift), then Tail. Head and Tail are instances of the full
// schedule as they are; Period is the first repetition's.
type PeriodicForm struct {
	Head, Period, Tail []Instance
	Shift              Shift
	Repetitions        int
}

// Len is the number of instances the form describes.
func (f *PeriodicForm) Len() int {
	return len(f.Head) + f.Repetitions*len(f.Period) + len(f.Tail)
}

// Each calls fn with every instance of the form in order: the head, each
// repetition, the tail; it stops at the first false.
func (f *PeriodicForm) Each(fn func(Instance) bool) {
	f.each(f.Repetitions, fn)
}

// each is Each with r repetitions, the tail moved back by the ones left
// out (the form's F_r, see Resized).
func (f *PeriodicForm) each(r int, fn func(Instance) bool) {
	for _, in := range f.Head {
		if !fn(in) {
			return
		}
	}
	for k := range r {
		for _, in := range f.Period {
			if !fn(Instance{Block: in.Block, Micro: in.Micro + k*f.Shift.Micro, Start: in.Start + k*f.Shift.Time}) {
				return
			}
		}
	}
	back := f.Repetitions - r
	for _, in := range f.Tail {
		if !fn(Instance{Block: in.Block, Micro: in.Micro - back*f.Shift.Micro, Start: in.Start - back*f.Shift.Time}) {
			return
		}
	}
}

// Resized is the schedule of the form with r repetitions instead of
// Repetitions (F_r): the same head, r repetitions, the tail moved back
// in time and micro-batch by the repetitions left out (or on by those
// added), on s's spec with as many fewer (more) micro-batches. It is
// materialised and carries no periodic form, repetend or claims.
func (s *Schedule) Resized(r int) *Schedule {
	f := s.Periodic
	n := s.MicroBatches - (f.Repetitions-r)*f.Shift.Micro
	out := &Schedule{Spec: s.Spec.WithMicroBatches(max(n, 1))}
	out.Instances = make([]Instance, 0, len(f.Head)+r*len(f.Period)+len(f.Tail))
	f.each(r, func(in Instance) bool { out.Instances = append(out.Instances, in); return true })
	return out
}

// Materialize is s with every instance of its periodic form (s itself
// where it has none, or has its instances already). It checks ctx every
// repetition and refuses a form of more than the instances limit.
func (s *Schedule) Materialize(ctx context.Context) (*Schedule, error) {
	f := s.Periodic
	if f == nil || s.Instances != nil {
		return s, nil
	}
	if err := f.check(s); err != nil {
		return nil, err
	}
	out := *s
	out.Instances = make([]Instance, 0, f.Len())
	out.Instances = append(out.Instances, f.Head...)
	for k := range f.Repetitions {
		if k%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, in := range f.Period {
			out.Instances = append(out.Instances, Instance{Block: in.Block, Micro: in.Micro + k*f.Shift.Micro, Start: in.Start + k*f.Shift.Time})
		}
	}
	out.Instances = append(out.Instances, f.Tail...)
	return &out, nil
}

// check refuses a form whose shape cannot be a schedule of s: no
// period, a shift that does not move forward, or more instances than
// the micro-batches and blocks give (so that nothing built from it
// grows without bound).
func (f *PeriodicForm) check(s *Schedule) error {
	switch {
	case len(f.Period) == 0:
		return fmt.Errorf("periodic form: an empty period")
	case f.Shift.Time < 1 || f.Shift.Micro < 1:
		return fmt.Errorf("periodic form: shift (time %d, micro-batches %d) must be at least 1 in both", f.Shift.Time, f.Shift.Micro)
	case f.Repetitions < 1:
		return fmt.Errorf("periodic form: %d repetitions (want at least 1)", f.Repetitions)
	case s.Placement == nil:
		return fmt.Errorf("periodic form: no placement")
	}
	want := s.MicroBatches * len(s.Placement.Blocks)
	if f.Repetitions > want || f.Len() != want {
		return fmt.Errorf("periodic form: %d head, %d period × %d repetitions and %d tail instances for %d micro-batches × %d blocks",
			len(f.Head), len(f.Period), f.Repetitions, len(f.Tail), s.MicroBatches, len(s.Placement.Blocks))
	}
	if f.Shift.Time > MaxStart || f.Shift.Micro > s.MicroBatches {
		return fmt.Errorf("periodic form: shift (time %d, micro-batches %d) out of range", f.Shift.Time, f.Shift.Micro)
	}
	return nil
}

// Check is check, for the verifier.
func (f *PeriodicForm) Check(s *Schedule) error { return f.check(s) }

// Horizon is the least number of repetitions R0 from which the form's
// schedules F_r, r ≥ R0, agree on every check the verifier makes and
// every metric but the makespan and loads (see package verify, "A
// schedule checked from its period"): the repetitions that the head's
// instances reach (H), that reach the tail (T), that one repetition's
// instances span (W) and that one micro-batch's instances span (M), with
// room on both sides. The form must have passed Check and its instances
// be in range (the verifier's presence check).
func (f *PeriodicForm) Horizon(p *placement.Placement) int {
	end := func(in Instance) int { return in.Start + max(p.Blocks[in.Block].Time, 1) }
	lo, hi := f.Period[0].Start, 0
	mlo, mhi := f.Period[0].Micro, f.Period[0].Micro
	for _, in := range f.Period {
		lo, hi = min(lo, in.Start), max(hi, end(in))
		mlo, mhi = min(mlo, in.Micro), max(mhi, in.Micro)
	}
	per, q := f.Shift.Time, f.Shift.Micro
	reps := func(d int) int { return max(0, d/per+1) } // least r with r·per > d
	w := reps(hi - lo)
	m := (mhi-mlo)/q + 1
	h := 0
	for _, in := range f.Head {
		h = max(h, reps(end(in)-lo), (in.Micro-mlo)/q+1)
	}
	// The tail as at one repetition: the head and one period before it.
	t := 0
	back := f.Repetitions - 1
	for _, in := range f.Tail {
		t = max(t, reps(hi-(in.Start-back*per)), (mhi-(in.Micro-back*q))/q+1)
	}
	return 2*(h+t+w+m) + 2
}

// Clone is a copy of f that shares nothing with it.
func (f *PeriodicForm) Clone() *PeriodicForm {
	if f == nil {
		return nil
	}
	c := *f
	c.Head, c.Period, c.Tail = slices.Clone(f.Head), slices.Clone(f.Period), slices.Clone(f.Tail)
	return &c
}

// PeriodicCheckable reports whether s's periodic form can be checked and
// measured from its period (package verify, "A schedule checked from its
// period"): only dependencies with fixed transfer times, one block per
// device, memory and latency apply (no decisions, pairs, link order,
// queued links or sharded stages), and the period frees on every device
// the memory it takes. Where it cannot, s is checked and measured
// materialised.
func PeriodicCheckable(s *Schedule) bool {
	p, f := s.Placement, s.Periodic
	if f == nil || p == nil || len(s.Decisions) > 0 || len(s.Pairs) > 0 || s.LinkOrder != nil || len(s.Shards) > 0 ||
		p.QueuedLinks || p.Overlap != nil || s.Sharding != nil || s.Allowed.Any() {
		return false
	}
	net := make([]int, p.Devices)
	for _, in := range f.Period {
		if in.Block < 0 || in.Block >= len(p.Blocks) {
			return false
		}
		for _, d := range p.Blocks[in.Block].Devices {
			net[d] += p.Blocks[in.Block].Memory
		}
	}
	return !slices.ContainsFunc(net, func(v int) bool { return v != 0 })
}

// FormHolds reports whether s's periodic form describes it: s has one,
// and its instances are not built or are the form's, in its order, with
// no repetend named. A schedule copied and changed keeps a form that no
// longer holds: then its instances alone count, for Measure, Write and
// the verifier.
func FormHolds(s *Schedule) bool {
	f := s.Periodic
	if f == nil {
		return false
	}
	if s.Instances == nil {
		return true
	}
	if s.Repetend != nil {
		return false
	}
	if len(s.Instances) != f.Len() {
		return false
	}
	x, same := 0, true
	f.Each(func(in Instance) bool {
		same = s.Instances[x] == in
		x++
		return same
	})
	return same
}

// fromForm reports whether Measure and Makespan take s's figures from
// its periodic form: one that is checkable from its period with every
// instance naming a block and the right count.
func fromForm(s *Schedule) bool {
	f := s.Periodic
	if f == nil || f.check(s) != nil || !PeriodicCheckable(s) || !FormHolds(s) {
		return false
	}
	k := len(s.Placement.Blocks)
	bad := func(in Instance) bool { return in.Block < 0 || in.Block >= k || in.Start < 0 || in.Start > MaxStart }
	return !slices.ContainsFunc(f.Head, bad) && !slices.ContainsFunc(f.Tail, bad) && !slices.ContainsFunc(f.Period, bad)
}

// measurePeriodic is Measure of a schedule checkable from its period:
// the makespan and loads summed from the form, the peak memory that of
// the form at Horizon repetitions (equal by the verifier's argument).
// Without all, only the makespan.
func measurePeriodic(s *Schedule, all bool) Metrics {
	p, f := s.Placement, s.Periodic
	var m Metrics
	m.Loads = make([]int, p.Devices)
	add := func(ins []Instance, times int) {
		for _, in := range ins {
			for _, d := range p.Blocks[in.Block].Devices {
				m.Loads[d] += times * p.Blocks[in.Block].Time
			}
		}
	}
	add(f.Head, 1)
	add(f.Period, f.Repetitions)
	add(f.Tail, 1)
	end := func(in Instance) int { return in.Start + p.Blocks[in.Block].Time }
	for _, in := range f.Head {
		m.Makespan = max(m.Makespan, end(in))
	}
	for _, in := range f.Period {
		m.Makespan = max(m.Makespan, end(in)+(f.Repetitions-1)*f.Shift.Time)
	}
	for _, in := range f.Tail {
		m.Makespan = max(m.Makespan, end(in))
	}
	if !all {
		return m
	}
	r0 := min(f.Horizon(p), f.Repetitions)
	m.PeakMemory = Measure(s.Resized(r0)).PeakMemory
	m.finish(s)
	return m
}
