package fsdp

import (
	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// By names the rule's argument of the makespan bound.
const By bound.MakespanBound = "the sharded stages' gathers and reductions"

// Bounds are what the rule adds to the lower bounds.
type Bounds struct {
	// Makespan is the rule's own argument (rules.LowerBounds raises a
	// sharding spec's bounds by it): on every rank with sharded stages,
	// every gather and reduction once on its collective stream, and,
	// where every compute of the rank is of a sharded stage, the least
	// gather before its first compute, its whole load, and the least
	// reduction after its last.
	Makespan int
	// Peak per device: the largest gathered parameters of its stages.
	Peak []int
}

// Bound is the rule's own lower bounds on schedule s's problem sharded by
// m; the spec's bounds with them are rules.LowerBounds of s's spec
// sharding m.
func Bound(s *schedule.Schedule, m Model) (Bounds, error) {
	r, err := resolve(m, s.Placement)
	if err != nil {
		return Bounds{}, err
	}
	p := s.Placement
	b := Bounds{Makespan: r.makespanBound(p, s.MicroBatches, len(s.Pairs) == 0), Peak: make([]int, p.Devices)}
	for i, st := range r.m.Stages {
		b.Peak[r.rank[i]] = max(b.Peak[r.rank[i]], st.Params)
	}
	return b, nil
}

// Bound raises b, at bound.Given (after every argument of the spec), by
// the rule's argument (Bounds.Makespan) where sp shards stages whose
// model resolves on its placement (the verifier names one that does
// not). A schedule the rule accepts has no overlapped pairs, so the
// argument holds in full.
func (Rule) Bound(sp spec.Spec, at bound.Step, b *bound.Bounds) {
	if at != bound.Given || sp.Sharding == nil {
		return
	}
	r, err := resolve(ModelOf(sp.Sharding), sp.Placement)
	if err != nil {
		return
	}
	b.Raise(r.makespanBound(sp.Placement, sp.MicroBatches, true), By)
}

// makespanBound is the rule's argument (Bounds.Makespan) for n
// micro-batches of p; whole says whether a rank's computes take their
// blocks' whole times (a pair runs in less).
func (r *rules) makespanBound(p *placement.Placement, n int, whole bool) int {
	comm := make([]int, p.Devices)
	minG, minR := make([]int, p.Devices), make([]int, p.Devices)
	for d := range minG {
		minG[d], minR[d] = -1, -1
	}
	for i, st := range r.m.Stages {
		d := r.rank[i]
		comm[d] += st.Gather + st.Reduce
		if minG[d] < 0 || st.Gather < minG[d] {
			minG[d] = st.Gather
		}
		if minR[d] < 0 || st.Reduce < minR[d] {
			minR[d] = st.Reduce
		}
	}
	load := make([]int, p.Devices)
	allSharded := make([]bool, p.Devices)
	for d := range allSharded {
		allSharded[d] = true
	}
	for i, blk := range p.Blocks {
		for _, d := range blk.Devices {
			load[d] += blk.Time * n
			if r.stageOf[i] < 0 {
				allSharded[d] = false
			}
		}
	}
	best := 0
	for d := range comm {
		best = max(best, comm[d])
		if allSharded[d] && minG[d] >= 0 && whole {
			best = max(best, minG[d]+load[d]+minR[d])
		}
	}
	return best
}
