package fsdp

import (
	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/schedule"
)

// Bounds are what the rule adds to the lower bounds.
type Bounds struct {
	// Makespan: the spec's own bound, and on every rank with sharded
	// stages, every gather and reduction once on its collective stream,
	// and, where every compute of the rank is of a sharded stage, the
	// least gather before its first compute, its whole load, and the
	// least reduction after its last.
	Makespan int
	// Peak per device: the largest gathered parameters of its stages.
	Peak []int
}

// Bound is the rule's lower bounds on schedule s's problem.
func Bound(s *schedule.Schedule, m Model) (Bounds, error) {
	r, err := resolve(m, s.Placement)
	if err != nil {
		return Bounds{}, err
	}
	p := s.Placement
	b := Bounds{Makespan: bound.LowerBounds(s.Spec).Makespan, Peak: make([]int, p.Devices)}
	comm := make([]int, p.Devices)
	minG, minR := make([]int, p.Devices), make([]int, p.Devices)
	for d := range minG {
		minG[d], minR[d] = -1, -1
	}
	for i, st := range r.m.Stages {
		d := r.rank[i]
		comm[d] += st.Gather + st.Reduce
		b.Peak[d] = max(b.Peak[d], st.Params)
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
			load[d] += blk.Time * s.MicroBatches
			if r.stageOf[i] < 0 {
				allSharded[d] = false
			}
		}
	}
	for d := range comm {
		b.Makespan = max(b.Makespan, comm[d])
		if allSharded[d] && minG[d] >= 0 && len(s.Pairs) == 0 { // a pair runs in less than its blocks' times
			b.Makespan = max(b.Makespan, minG[d]+load[d]+minR[d])
		}
	}
	return b, nil
}
