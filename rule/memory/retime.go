package memory

import (
	"errors"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
)

// Constrain keeps, in a compaction that keeps a schedule's decisions
// (Retiming.From), every device's order of memory changes: instance
// starts, an offload's end, a recomputed forward's end, a reload's start,
// a recompute's start, by their given times, two at one time in the
// memory phases' order (placement's PhaseFree, PhaseBlock, PhaseReturn),
// then by block, micro-batch and instance or decision. Keeping that order
// keeps every running sum, and where two changes come to share a time the
// phases put a free first and a return last, which never raises a peak:
// the result fits wherever the schedule did. Without decisions a
// device's order of instances is its order of memory changes, which the
// device orders keep already. The decisions' variables are those the rule
// of the decisions made before this one (Retiming.Decision).
func (Rule) Constrain(t *rule.Retiming) error {
	s := t.From
	if s == nil || len(s.Decisions) == 0 {
		return nil
	}
	if t.Decision == nil {
		return errors.New("the decisions have no variables")
	}
	p := s.Placement
	ni := len(s.Instances)
	// item is one memory change: time = its variable's value + off.
	type item struct {
		v, off, time, phase, block, micro, seq int
	}
	mem := make([][]item, p.Devices)
	nmem := make([]int, p.Devices)
	for _, in := range s.Instances {
		for _, d := range p.Blocks[in.Block].Devices {
			nmem[d]++
		}
	}
	for _, dc := range s.Decisions {
		for _, d := range p.Blocks[dc.Block].Devices {
			nmem[d] += 2
		}
	}
	for d := range mem {
		mem[d] = make([]item, 0, nmem[d])
	}
	// start is the given start of each instance, by micro-batch and
	// block: a slice, not a map (this runs on every list schedule that
	// decides, at every N).
	k := len(p.Blocks)
	start := make([]int, s.MicroBatches*k)
	for x, in := range s.Instances {
		start[in.Micro*k+in.Block] = in.Start
		v := t.Var(in.Ref())
		for _, d := range p.Blocks[in.Block].Devices {
			mem[d] = append(mem[d], item{v: v, time: in.Start, phase: placement.PhaseBlock, block: in.Block, micro: in.Micro, seq: x})
		}
	}
	for j, dc := range s.Decisions {
		st := t.Decision(j)
		b := p.Blocks[dc.Block]
		for _, d := range b.Devices {
			switch dc.Action {
			case placement.Offload:
				tt := p.OffloadTime(dc.Block)
				mem[d] = append(mem[d], item{v: st, off: tt, time: dc.Start + tt, phase: placement.PhaseFree, block: dc.Block, micro: dc.Micro, seq: ni + j},
					item{v: st + 1, time: dc.Reload, phase: placement.PhaseReturn, block: dc.Block, micro: dc.Micro, seq: ni + j})
			case placement.Recompute:
				end := start[dc.Micro*k+dc.Block] + b.Time
				mem[d] = append(mem[d], item{v: t.Var(dc.Ref()), off: b.Time, time: end, phase: placement.PhaseFree, block: dc.Block, micro: dc.Micro, seq: ni + j},
					item{v: st, time: dc.Start, phase: placement.PhaseReturn, block: dc.Block, micro: dc.Micro, seq: ni + j})
			}
		}
	}
	order := func(a, b item) int {
		if a.time != b.time {
			return a.time - b.time
		}
		if a.phase != b.phase {
			return a.phase - b.phase
		}
		if a.block != b.block {
			return a.block - b.block
		}
		if a.micro != b.micro {
			return a.micro - b.micro
		}
		return a.seq - b.seq
	}
	for _, list := range mem {
		slices.SortFunc(list, order)
		for k := 1; k < len(list); k++ {
			// time(k) ≥ time(k-1): v_k + off_k ≥ v_{k-1} + off_{k-1}.
			t.Sys.Add(list[k].v, list[k-1].v, list[k-1].off-list[k].off)
		}
	}
	return nil
}
