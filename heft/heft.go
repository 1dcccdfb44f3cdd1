// Package heft is list scheduling by earliest finish time with transfer
// times (HEFT: Topcuoglu, Hariri and Wu, "Performance-Effective and
// Low-Complexity Task Scheduling for Heterogeneous Computing"), on a
// placement whose blocks may choose their devices among candidates. It
// chooses every block's device group and a schedule in one pass, without
// a solver: a baseline to compare with, and a start of the search over
// assignments, so that the search never returns worse than it.
//
// Every block gets one group for all its micro-batches (a placement, not
// a per-instance dispatch): the first of its instances to be scheduled
// chooses it, the others follow.
package heft

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Options configure Run.
type Options struct {
	MicroBatches int // N; 0 means 1
	Memory       int // the schedule's budget (0: unlimited); HEFT does not plan memory, the verifier checks it
}

// Result is HEFT's choice and schedule.
type Result struct {
	// Choice is every block's option (its index in placement's
	// Options), by block index.
	Choice []int
	// Schedule is the verified schedule of the chosen placement
	// (placement's Choose).
	Schedule *schedule.Schedule
}

// Run schedules the micro-batches of p, a placement whose blocks may
// have candidates (placement's Options), with the times and transfers
// each choice costs (placement's OptionTime and OptionTransfer: a
// cluster's, once applied). Instances are taken by upward rank (the
// longest path to the end of the micro-batch, block and transfer times
// averaged over the options), highest first, then micro-batch, then block
// index; each goes to the option where it finishes first, into the
// earliest gap of that group's devices that its inputs allow. The
// per-device orders found are then timed exactly on the chosen placement
// (Timed: compact.Compact, links with channels included) and verified.
func Run(p *placement.Placement, o Options) (*Result, error) {
	n := max(o.MicroBatches, 1)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("heft: %w", err)
	}
	k := len(p.Blocks)
	opts := make([][][]int, k)
	avg := make([]float64, k)
	for i := range p.Blocks {
		opts[i] = p.DeviceOptions(i)
		for g := range opts[i] {
			avg[i] += float64(p.OptionTime(i, g))
		}
		avg[i] /= float64(len(opts[i]))
	}
	avgComm := func(d placement.Dep) float64 {
		s := 0.0
		for a := range opts[d.From] {
			for b := range opts[d.To] {
				s += float64(p.OptionTransfer(d, a, b))
			}
		}
		return s / float64(len(opts[d.From])*len(opts[d.To]))
	}
	order, ok := p.Topo()
	if !ok {
		return nil, fmt.Errorf("heft: placement %q has a cycle", p.Name)
	}
	succs := p.SuccDeps()
	rank := make([]float64, k)
	for x := k - 1; x >= 0; x-- {
		i := order[x]
		best := 0.0
		for _, d := range succs[i] {
			best = max(best, avgComm(d)+rank[d.To])
		}
		rank[i] = avg[i] + best
	}
	type task struct{ block, micro int }
	tasks := make([]task, 0, k*n)
	for i := range k {
		for m := range n {
			tasks = append(tasks, task{i, m})
		}
	}
	// Upward rank decreases along every dependency (a block takes at
	// least 1), so this order is topological within a micro-batch.
	slices.SortStableFunc(tasks, func(a, b task) int {
		return cmp.Or(-cmp.Compare(rank[a.block], rank[b.block]), cmp.Compare(a.micro, b.micro), cmp.Compare(a.block, b.block))
	})
	choice := make([]int, k)
	for i := range choice {
		choice[i] = -1
	}
	finish := make([]int, k*n)
	busy := make([][]interval, p.Devices)
	preds := p.PredDeps()
	for _, t := range tasks {
		bestG, bestStart, bestEnd := -1, 0, 0
		for g, devs := range opts[t.block] {
			if choice[t.block] >= 0 && choice[t.block] != g {
				continue
			}
			ready := 0
			for _, d := range preds[t.block] {
				ready = max(ready, finish[d.From*n+t.micro]+p.OptionTransfer(d, choice[d.From], g))
			}
			w := p.OptionTime(t.block, g)
			s := earliest(busy, devs, ready, w)
			if bestG < 0 || s+w < bestEnd {
				bestG, bestStart, bestEnd = g, s, s+w
			}
		}
		choice[t.block] = bestG
		finish[t.block*n+t.micro] = bestEnd
		for _, dv := range opts[t.block][bestG] {
			busy[dv] = insert(busy[dv], interval{bestStart, bestEnd, schedule.Ref{Block: t.block, Micro: t.micro}})
		}
	}
	s, err := Timed(spec.Spec{Placement: p, MicroBatches: n, Memory: o.Memory}, choice, orders(busy))
	if err != nil {
		return nil, fmt.Errorf("heft: %w", err)
	}
	return &Result{Choice: choice, Schedule: s}, nil
}

// Timed is the schedule of the spec's micro-batches of its placement p
// with block i on its option choice[i] (placement's Choose), each device running its instances in
// the order orders gives, each as early as that order and the
// dependencies (with the chosen transfer times, and link queues with
// channels) allow (compact.Compact). It is verified; an error says why
// not.
func Timed(sp spec.Spec, choice []int, orders [][]schedule.Ref) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	q, err := placement.Choose(p, choice)
	if err != nil {
		return nil, err
	}
	cs, err := compact.Compact(spec.New(q, n), compact.Keep{Orders: orders})
	if err != nil {
		return nil, err
	}
	ins := cs.Instances
	s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: n, Memory: memory}, Instances: ins}
	if err := verify.Schedule(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Insert is the schedule of the spec's micro-batches of its placement p
// with block i on its option choice[i], the instances taken in the order seq gives (which
// must put every instance after those it depends on), each into the
// earliest gap of its devices that its inputs allow, then timed exactly
// (Timed) and verified.
func Insert(sp spec.Spec, choice []int, seq []schedule.Ref) (*schedule.Schedule, error) {
	p, n := sp.Placement, sp.MicroBatches
	if len(choice) != len(p.Blocks) {
		return nil, fmt.Errorf("choice of %d blocks for %d", len(choice), len(p.Blocks))
	}
	if len(seq) != len(p.Blocks)*n {
		return nil, fmt.Errorf("%d instances in the sequence for %d", len(seq), len(p.Blocks)*n)
	}
	preds := p.PredDeps()
	finish := make([]int, len(p.Blocks)*n)
	done := make([]bool, len(p.Blocks)*n)
	busy := make([][]interval, p.Devices)
	for _, r := range seq {
		ready := 0
		for _, d := range preds[r.Block] {
			if !done[d.From*n+r.Micro] {
				return nil, fmt.Errorf("%s^%d comes before %s^%d in the sequence", p.Blocks[r.Block].ID, r.Micro, p.Blocks[d.From].ID, r.Micro)
			}
			ready = max(ready, finish[d.From*n+r.Micro]+p.OptionTransfer(d, choice[d.From], choice[r.Block]))
		}
		devs := p.DeviceOptions(r.Block)[choice[r.Block]]
		w := p.OptionTime(r.Block, choice[r.Block])
		s := earliest(busy, devs, ready, w)
		finish[r.Block*n+r.Micro], done[r.Block*n+r.Micro] = s+w, true
		for _, dv := range devs {
			busy[dv] = insert(busy[dv], interval{s, s + w, r})
		}
	}
	return Timed(sp, choice, orders(busy))
}

// orders is the per-device orders of busy intervals.
func orders(busy [][]interval) [][]schedule.Ref {
	out := make([][]schedule.Ref, len(busy))
	for dv, xs := range busy {
		for _, iv := range xs {
			out[dv] = append(out[dv], iv.ref)
		}
	}
	return out
}

// interval is a busy time [start, end) of a device and what runs there.
type interval struct {
	start, end int
	ref        schedule.Ref
}

// insert adds iv to the sorted, disjoint intervals xs.
func insert(xs []interval, iv interval) []interval {
	at, _ := slices.BinarySearchFunc(xs, iv.start, func(x interval, s int) int { return cmp.Compare(x.start, s) })
	return slices.Insert(xs, at, iv)
}

// earliest is the earliest time ≥ ready at which every device of devs is
// idle for w: ready itself or the end of one of their busy intervals.
func earliest(busy [][]interval, devs []int, ready, w int) int {
	cands := []int{ready}
	for _, dv := range devs {
		for _, iv := range busy[dv] {
			if iv.end > ready {
				cands = append(cands, iv.end)
			}
		}
	}
	slices.Sort(cands)
	for _, t := range cands {
		if free(busy, devs, t, t+w) {
			return t
		}
	}
	return cands[len(cands)-1] // unreachable: after the last end every device is idle
}

func free(busy [][]interval, devs []int, s, e int) bool {
	for _, dv := range devs {
		for _, iv := range busy[dv] {
			if iv.start < e && s < iv.end {
				return false
			}
		}
	}
	return true
}
