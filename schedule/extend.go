package schedule

import (
	"context"
	"slices"
)

// # Extending a schedule periodically
//
// The Tessel paper's search costs the same whatever the number of
// micro-batches: the repetend is searched once and repeated (Lin et al.,
// "Tessel: Boosting Distributed Execution of Large DNN Models via
// Flexible Schedule Search"). Extension is that step for any schedule
// whose steady state Steady finds, one stretch (a repetend) or several
// one after another (say all forwards of a shared block, then the
// stages, then its backwards): a schedule found for a window of
// micro-batches becomes the schedule of N by repeating the first window
// of each stretch, every instance after it moved by the time the copies
// take and, within the stretch, by the micro-batches they add.

// Extension is how a schedule grows to more micro-batches by its steady
// state (Extensible): each of its stretches repeats its first window
// Copies[j] more times.
type Extension struct {
	From      *Schedule
	N         int       // the micro-batches of the extended schedule
	Stretches []Stretch // From's steady state, in time order
	Copies    []int     // per stretch: (N − From.MicroBatches) / PerPeriod
}

// Extensible is how s extends to n ≥ s.MicroBatches micro-batches, from
// a steady state whose every stretch's micro-batches per window divide
// n − s.MicroBatches; ok is false where s has none (or carries decisions,
// pairs or a link order, which an extension does not carry). The
// schedule itself is built by Extension.Schedule and verified there.
func Extensible(s *Schedule, n int) (x *Extension, ok bool) {
	k := n - s.MicroBatches
	if s == nil || k < 0 || len(s.Decisions) > 0 || len(s.Pairs) > 0 || s.LinkOrder != nil {
		return nil, false
	}
	if k == 0 {
		return &Extension{From: s, N: n}, true
	}
	st := steady(s, func(q int) bool { return k%q == 0 })
	if st == nil {
		return nil, false
	}
	x = &Extension{From: s, N: n, Stretches: st.Stretches}
	for _, c := range st.Stretches {
		x.Copies = append(x.Copies, k/c.PerPeriod)
	}
	return x, true
}

// shift is the time the copies of the stretches whose first window ends
// by t add before t.
func (x *Extension) shift(t int) int {
	d := 0
	for j, c := range x.Stretches {
		if c.Start+c.Period <= t {
			d += x.Copies[j] * c.Period
		}
	}
	return d
}

// stretchOf is, per block, the index of its stretch in x.Stretches.
func (x *Extension) stretchOf() []int {
	of := make([]int, len(x.From.Placement.Blocks))
	for j, c := range x.Stretches {
		for _, i := range c.Blocks {
			of[i] = j
		}
	}
	return of
}

// each calls f with every instance of the extended schedule, in the
// order of From's instances (each followed by its copies).
func (x *Extension) each(f func(Instance)) {
	s := x.From
	k := x.N - s.MicroBatches
	if k == 0 {
		for _, in := range s.Instances {
			f(in)
		}
		return
	}
	of := x.stretchOf()
	for _, in := range s.Instances {
		c := x.Stretches[of[in.Block]]
		t := in.Start + x.shift(in.Start)
		switch {
		case in.Start < c.Start:
			f(Instance{Block: in.Block, Micro: in.Micro, Start: t})
		case in.Start < c.Start+c.Period:
			f(Instance{Block: in.Block, Micro: in.Micro, Start: t})
			for r := 1; r <= x.Copies[of[in.Block]]; r++ {
				f(Instance{Block: in.Block, Micro: in.Micro + r*c.PerPeriod, Start: t + r*c.Period})
			}
		default:
			f(Instance{Block: in.Block, Micro: in.Micro + k, Start: t})
		}
	}
}

// Makespan is the extended schedule's makespan, found without building
// it (so that many schedules of a window can be compared at N).
func (x *Extension) Makespan() int {
	p := x.From.Placement
	ms := 0
	x.each(func(in Instance) { ms = max(ms, in.Start+p.Blocks[in.Block].Time) })
	return ms
}

// Schedule builds the extended schedule, checking ctx as it goes (an
// extension to a million micro-batches builds millions of instances).
// Beyond PeriodicInstances instances, where From's steady state is one
// stretch, it carries its periodic form (Form) and its instances are the
// form's, in its order, with no repetend. It is not checked here: the
// caller verifies it (verify.Schedule, from the period where it has
// one), and an error there says that the copies break a rule (the
// steady state does not extend).
func (x *Extension) Schedule(ctx context.Context) (*Schedule, error) {
	s := x.From
	if x.N*len(s.Placement.Blocks) > PeriodicInstances {
		if f := x.Form(); f != nil {
			return (&Schedule{Spec: s.Spec.WithMicroBatches(x.N), Periodic: f}).Materialize(ctx)
		}
	}
	ins := make([]Instance, 0, len(s.Instances)+(x.N-s.MicroBatches)*len(s.Placement.Blocks))
	stopped := false
	x.each(func(in Instance) {
		if len(ins)%(1<<16) == 0 && ctx.Err() != nil {
			stopped = true
		}
		if !stopped {
			ins = append(ins, in)
		}
	})
	if stopped {
		return nil, ctx.Err()
	}
	out := &Schedule{Spec: s.Spec.WithMicroBatches(x.N), Instances: ins}
	if r := x.repetend(); r != nil {
		out.Repetend = r
	}
	return out, nil
}

// Form is the extended schedule's periodic form where From's steady
// state is one stretch (nil otherwise): the instances before the
// stretch's first window are the head, those of the window the period,
// repeated Copies+1 times a Period and PerPeriod micro-batches apart,
// and those after it the tail, moved by the copies.
func (x *Extension) Form() *PeriodicForm {
	if len(x.Stretches) != 1 {
		return nil
	}
	c := x.Stretches[0]
	k := x.N - x.From.MicroBatches
	f := &PeriodicForm{Shift: Shift{Time: c.Period, Micro: c.PerPeriod}, Repetitions: x.Copies[0] + 1}
	for _, in := range x.From.Instances {
		switch {
		case in.Start < c.Start:
			f.Head = append(f.Head, in)
		case in.Start < c.Start+c.Period:
			f.Period = append(f.Period, in)
		default:
			f.Tail = append(f.Tail, Instance{Block: in.Block, Micro: in.Micro + k, Start: in.Start + x.Copies[0]*c.Period})
		}
	}
	if len(f.Period) == 0 {
		return nil
	}
	return f
}

// Steady is the extended schedule's steady state: From's stretches,
// each with its copies added and moved as its instances are, without
// looking at the extended schedule's instances (Steady there costs time
// in proportion to N).
func (x *Extension) Steady() *SteadyState {
	if len(x.Stretches) == 0 {
		return nil
	}
	st := &SteadyState{}
	q := 1
	period, busy := 0, 0
	for j, c := range x.Stretches {
		c.Blocks = slices.Clone(c.Blocks)
		c.Start += x.shift(c.Start)
		c.Iterations += x.Copies[j]
		st.Stretches = append(st.Stretches, c)
		q = lcm(q, c.PerPeriod)
	}
	main := 0
	for j, c := range st.Stretches {
		period += c.Period * q / c.PerPeriod
		busy += c.Busy * q / c.PerPeriod
		if c.Iterations*c.Period > st.Stretches[main].Iterations*st.Stretches[main].Period {
			main = j
		}
	}
	st.Main = st.Stretches[main]
	st.Period, st.PerPeriod, st.NR = period, q, st.Main.NR
	st.BubbleRate = bubble(x.From.Placement.Devices, period, busy)
	return st
}

// repetend is the extended schedule's repetend where From records one
// and its steady state is that one stretch (nil otherwise): its
// iterations grow by the copies.
func (x *Extension) repetend() *Repetend {
	r := x.From.Repetend
	if r == nil || len(x.Stretches) != 1 {
		if len(x.Stretches) == 0 && r != nil {
			c := *r
			return &c
		}
		return nil
	}
	c := x.Stretches[0]
	if c.PerPeriod != 1 || c.Period != r.Period || r.Start != c.Start || r.Iterations > c.Iterations {
		return nil
	}
	out := *r
	out.Offsets = slices.Clone(r.Offsets)
	out.Iterations += x.Copies[0]
	return &out
}
