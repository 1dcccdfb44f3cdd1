package baseline

import (
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// PyTorch's schedules for several stages per rank (torch.distributed.
// pipelining, schedules.py) on the loop placement: the chain visits the
// same cycle of L devices v times, rank r holding stages r, r+L, …,
// r+(v−1)L (v-shape --chunks v --order loop). Only the order of each
// rank's actions is taken from PyTorch; compaction times it with the
// placement's own times and transfers, as PyTorch's runtime would run it.

// loopPipeline reads p as a pipeline on the loop placement: v ≥ 2 stages
// per device, stage j on device dev[j mod L].
func loopPipeline(name string, p *placement.Placement, n, memory int) (q pipeline, v, L int, err error) {
	if err := checkArgs(name, p, n, memory); err != nil {
		return q, 0, 0, err
	}
	q, err = wholePipeline(p)
	if err != nil {
		return q, 0, 0, notApplicable(name, p, "not a pipeline: %v", err)
	}
	v, ok := q.stagesPerDevice()
	if !ok || v < 2 {
		return q, 0, 0, notApplicable(name, p, "needs the loop placement: the chain visits the same cycle of devices once per chunk, at least twice (--chunks C --order loop)")
	}
	return q, v, q.stages() / v, nil
}

// LoopedBFS is PyTorch's ScheduleLoopedBFS (after Lamy-Poirier,
// "Breadth-First Pipeline Parallelism", 2023) on the loop placement: each
// rank runs the forwards of its stages one stage after the other, every
// micro-batch of a stage before the next stage, then the backwards of its
// stages in reverse stage order, each stage's micro-batches in reverse
// order (as PyTorch writes it). It keeps every activation of the rank
// (GPipe's memory); with a split backward each weight block runs right after its input block
// (PyTorch's full backward).
func LoopedBFS(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "looped-bfs"
	q, v, L, err := loopPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	orders := make([][]schedule.Ref, p.Devices)
	for r := range L {
		var order []schedule.Ref
		for c := range v {
			for m := range n {
				order = append(order, schedule.Ref{Block: q.fwd[c*L+r], Micro: m})
			}
		}
		if len(q.bwd) > 0 {
			for c := v - 1; c >= 0; c-- {
				for m := n - 1; m >= 0; m-- {
					order = append(order, schedule.Ref{Block: q.bwd[c*L+r], Micro: m})
					if q.split() {
						order = append(order, schedule.Ref{Block: q.wgt[c*L+r], Micro: m})
					}
				}
			}
		}
		orders[q.dev[r]] = order
	}
	return finish(name, p, n, memory, orders)
}

// ZB1P is PyTorch's ScheduleInterleavedZeroBubble, the ZB1P schedule of Qi
// et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024), as PyTorch builds
// it for v stages per rank on the loop placement with a split backward.
// Micro-batches go in rounds of n / max(1, ⌊n/L⌋) (n must be a whole
// number of rounds). Rank r warms up with (v−1)·(round size) + L−1−r
// forwards (capped at v·n), the local stage of each step advancing every
// round size; then each step runs a forward and an input block, the input
// blocks walking the local stages in reverse order; from the (r+1)-th
// input block on, each step also runs the weight block of the oldest input
// block that has none yet; the cooldown runs the remaining input blocks
// the same way, and the weight blocks left come last.
func ZB1P(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "zb1p"
	q, v, L, err := loopPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	if !q.split() {
		return nil, notApplicable(name, p, "needs a backward split into input and weight blocks (--split-backward)")
	}
	rounds := max(1, n/L)
	if n%rounds != 0 {
		return nil, notApplicable(name, p, "PyTorch's ScheduleInterleavedZeroBubble needs the %d micro-batches to be a multiple of its %d rounds", n, rounds)
	}
	per := n / rounds
	orders := make([][]schedule.Ref, p.Devices)
	for r := range L {
		warmup := min((v-1)*per+(L-1-r), n*v)
		fwdBwd := v*n - warmup
		cooldown := warmup
		fwdStage := func(step int) int { return (step/per%v)*L + r }
		bwdStage := func(step int) int { return (v-1-(step-warmup)/per%v)*L + r }
		next := map[int]int{} // block → next micro-batch
		var order []schedule.Ref
		add := func(block int) {
			order = append(order, schedule.Ref{Block: block, Micro: next[block]})
			next[block]++
		}
		var inputSteps []int // the step of every input block so far
		weights := 0
		input := func(step int) {
			add(q.bwd[bwdStage(step)])
			inputSteps = append(inputSteps, step)
			if step-warmup >= r {
				add(q.wgt[bwdStage(inputSteps[weights])])
				weights++
			}
		}
		for step := range warmup + fwdBwd + cooldown {
			switch {
			case step < warmup:
				add(q.fwd[fwdStage(step)])
			case step < warmup+fwdBwd:
				add(q.fwd[fwdStage(step)])
				input(step)
			default:
				input(step)
			}
		}
		for ; weights < len(inputSteps); weights++ {
			add(q.wgt[bwdStage(inputSteps[weights])])
		}
		for _, b := range order {
			if next[b.Block] != n {
				return nil, fmt.Errorf("%s: placement %q: rank %d runs block %d %d times, want %d (a bug)", name, p.Name, r, b.Block, next[b.Block], n)
			}
		}
		orders[q.dev[r]] = order
	}
	return finish(name, p, n, memory, orders)
}
