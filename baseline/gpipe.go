package baseline

import (
	"cmp"
	"slices"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// GPipe runs all forwards of all micro-batches, then all backwards (GPipe,
// Huang et al. 2019). It applies to every placement: the forward phase is
// every forward block that no backward block precedes, the backward phase
// everything else. Within a phase, instances go by the earliest start of
// their block in one micro-batch, then by micro-batch: on a pipeline every
// stage runs its micro-batches in order, and a device holding blocks of
// parallel branches runs the branch that is ready first for all
// micro-batches. Every device keeps that one global order, so blocks on a
// group of devices meet in the same order everywhere. Its peak memory is N
// activations on every device holding forwards.
func GPipe(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "gpipe"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, err
	}
	topo, _ := p.Topo()
	// A block is in the backward phase when its role is a gradient's
	// (placement's Roles: backward, input or weight, read from the graph)
	// or it depends on one. Phase and earliest
	// start only grow along dependencies, so the sequence below respects
	// them.
	late := make([]bool, p.K())
	preds := p.Preds()
	roles := p.Roles()
	for _, i := range topo {
		late[i] = roles[i].Gradient()
		for _, j := range preds[i] {
			late[i] = late[i] || late[j]
		}
	}
	head := p.Heads()
	rank := make([]int, p.K())
	for k, i := range topo {
		rank[i] = k
	}
	phase := func(i int) int {
		if late[i] {
			return 1
		}
		return 0
	}
	var seq []schedule.Ref
	for _, i := range topo {
		for m := range n {
			seq = append(seq, schedule.Ref{Block: i, Micro: m})
		}
	}
	slices.SortFunc(seq, func(a, b schedule.Ref) int {
		return cmp.Or(cmp.Compare(phase(a.Block), phase(b.Block)), cmp.Compare(head[a.Block], head[b.Block]),
			cmp.Compare(a.Micro, b.Micro), cmp.Compare(rank[a.Block], rank[b.Block]))
	})
	return finish(name, p, n, memory, project(p, seq))
}
