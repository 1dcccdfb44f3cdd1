// Package bound holds what every lower bound of a problem (a spec.Spec)
// shares: the bounds' type, the arguments every spec has (the critical
// path, the blocks on every device as barriers, each device's load), and
// Of, which runs them with the arguments of the rules a spec switches on
// (each rule's own, in its package under rule/) in one order. The bounds
// of the period of a repetend and of the makespan of N micro-batches are
// a function of the spec alone — no schedule is needed; every search
// reports its result beside them, and a result that meets them is proven.
//
// rules.LowerBounds (package rule/rules) is the entry point: Of with
// every rule of the one list. The host channel's bound (HostChannel) is
// not one of the rules' arguments yet.
package bound

import (
	"math"

	"github.com/tessel-pp/tessel/spec"
)

// Bounds are lower bounds that no schedule of the placement can beat.
type Bounds struct {
	Period   int // of a repetend: max_d load_d of one micro-batch, raised by the rules
	Makespan int // of N micro-batches; see Of
	// By names the argument that gives Makespan (the first to reach it,
	// in the order Of runs them).
	By MakespanBound
}

// Raise raises the makespan bound to v where v is larger, naming by: so
// the first argument to reach the bound names it.
func (b *Bounds) Raise(v int, by MakespanBound) {
	if v > b.Makespan {
		b.Makespan, b.By = v, by
	}
}

// MakespanBound names an argument of the makespan bound, for people: the
// generic ones are declared here, a rule's in its own package (links.By,
// memory.By, latency.By, fsdp.By).
type MakespanBound string

// The arguments every spec has.
const (
	// BoundCriticalPath: the critical path of one micro-batch.
	BoundCriticalPath MakespanBound = "the critical path"
	// BoundDeviceLoad: a device's work, with the least head and tail.
	BoundDeviceLoad MakespanBound = "a device's load"
	// BoundBarriers: the blocks on all devices cut out of the time line
	// (barrierBound).
	BoundBarriers MakespanBound = "the relaxation with blocks on all devices as barriers"
)

// String says what the bound is, for people.
func (b MakespanBound) String() string { return string(b) }

// Step is a place in the order in which Of runs the arguments: the order
// decides which argument names a bound that two reach (Bounds.By), and
// some arguments start from the bound so far.
type Step int

const (
	// Loads comes first: a rule's loads of one micro-batch on resources
	// other than the devices raise the period, and the time n of them
	// take the makespan (the links'); then the least period the rule
	// allows from the period so far (the memory budget's).
	Loads Step = iota
	// Path comes after the critical path, before the barriers and the
	// devices' loads (the memory budget's hold).
	Path
	// Devices comes after every argument of the spec, from the bound
	// they reach (the memory-time of the decisions).
	Devices
	// Given comes last, on the spec as given where a rule relaxed it
	// (Relaxer) and its bounds were scaled back (the latency budget's).
	Given
)

// Rule is a rule of the timing model as the bounds see it (rule.Rule is
// one): On says whether a spec switches it on; it bounds where it is a
// Bounder, a Relaxer or both.
type Rule interface {
	On(sp spec.Spec) bool
}

// Bounder is a rule that bounds (rule.Bounder): at every step Bound
// raises b, the bounds of sp so far, by the rule's arguments of that
// step (Raise names the rule's argument where it raises the makespan).
// Of calls it only where sp switches the rule on, at Loads whatever the
// number of micro-batches and at the later steps only for N ≥ 1.
type Bounder interface {
	Bound(sp spec.Spec, at Step, b *Bounds)
}

// Relaxer is a rule whose bounds are those of a relaxed spec (rule.
// Relaxer): every schedule of sp becomes one of the relaxed spec, its
// times k times as long at most, and the rule is off in it; the bounds
// of sp are then the relaxed spec's divided by k (rounded up).
type Relaxer interface {
	Relax(sp spec.Spec) (relaxed spec.Spec, k int)
}

// Of returns the lower bounds of the spec's n micro-batches of its
// placement p (which must be valid) under the rules of list that it
// switches on. Period ≥ max_d load_d: a repetend runs every block once on
// each device; the rules raise it (the links' loads, the memory budget).
// Makespan is the largest of these arguments, run in this order (Step):
//
//   - the rules' arguments at Loads;
//
//   - the critical path of one micro-batch (its dependency chain alone);
//
//   - the rules' arguments at Path;
//
//   - the same with the blocks on all devices taken out (barrierBound):
//     for every device d and every set S of its other blocks whose heads
//     and tails are at least given thresholds, min_S head + n·Σ_S t +
//     min_S tail + n·B, B the time of one micro-batch's blocks on all
//     devices, heads and tails counted with those blocks and transfers
//     at time 0;
//
//   - max_d (min head_d + n·load_d + min tail_d), where head_i (tail_i) is
//     the longest dependency path before (after) block i, transfer times
//     included (placement's Heads and Tails), and the minima run
//     over the blocks on d. Proof: the first instance device d runs, of some
//     block i, starts no earlier than head_i ≥ min head_d, since its
//     predecessors in the same micro-batch run before it; from then d is
//     busy for n·load_d in total, one instance at a time, so its last
//     instance, of some block j, ends at E ≥ min head_d + n·load_d; the
//     successors of that instance then need tail_j ≥ min tail_d more;
//
//   - the rules' arguments at Devices;
//
//   - where a rule relaxes the spec (Relaxer), all of the above are the
//     relaxed spec's, scaled back; then the rules' arguments at Given,
//     on the spec as given.
//
// Within a step the rules run in the order of list. For n ≤ 0 the
// makespan bound is 0. By names the argument that gives the makespan
// bound: the first to reach it, in that order.
func Of(sp spec.Spec, list []Rule) Bounds {
	b := relaxed(sp, list)
	if sp.MicroBatches > 0 {
		step(sp, list, Given, &b)
	}
	return b
}

// relaxed is Of before its last step: of the relaxed spec, scaled back,
// where a rule relaxes sp.
func relaxed(sp spec.Spec, list []Rule) Bounds {
	for _, r := range list {
		if x, ok := r.(Relaxer); ok && r.On(sp) {
			q, k := x.Relax(sp)
			b := relaxed(q, list)
			up := func(v int) int { return (v + k - 1) / k }
			return Bounds{Period: up(b.Period), Makespan: up(b.Makespan), By: b.By}
		}
	}
	p, n := sp.Placement, sp.MicroBatches
	b := Bounds{Period: p.MaxLoad(), By: BoundCriticalPath}
	step(sp, list, Loads, &b)
	if n <= 0 {
		return Bounds{Period: b.Period, By: BoundCriticalPath}
	}
	b.Raise(p.CriticalPath(), BoundCriticalPath)
	step(sp, list, Path, &b)
	b.Raise(barrierBound(p, n), BoundBarriers)
	heads, tails := p.Heads(), p.Tails()
	loads := p.Loads()
	for d, blocks := range p.DeviceBlocks() {
		if len(blocks) == 0 {
			continue
		}
		minHead, minTail := math.MaxInt, math.MaxInt
		for _, i := range blocks {
			minHead = min(minHead, heads[i])
			minTail = min(minTail, tails[i])
		}
		b.Raise(minHead+n*loads[d]+minTail, BoundDeviceLoad)
	}
	step(sp, list, Devices, &b)
	return b
}

// step runs the arguments at one step of the rules of list that sp
// switches on.
func step(sp spec.Spec, list []Rule, at Step, b *Bounds) {
	for _, r := range list {
		if x, ok := r.(Bounder); ok && r.On(sp) {
			x.Bound(sp, at, b)
		}
	}
}
