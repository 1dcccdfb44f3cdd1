package baseline

import (
	"cmp"
	"slices"

	"github.com/tessel-pp/tessel/placement"
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
	return finish(name, p, n, memory, gpipeOrders(p, n, n))
}

// gpipeOrders are GPipe's device orders of n micro-batches in rounds of
// rounds micro-batches (n: one round).
func gpipeOrders(p *placement.Placement, n, rounds int) [][]schedule.Ref {
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
	round := func(m int) int { return m / rounds } // 0 for every m when rounds is n
	slices.SortFunc(seq, func(a, b schedule.Ref) int {
		return cmp.Or(cmp.Compare(round(a.Micro), round(b.Micro)), cmp.Compare(phase(a.Block), phase(b.Block)), cmp.Compare(head[a.Block], head[b.Block]),
			cmp.Compare(a.Micro, b.Micro), cmp.Compare(rank[a.Block], rank[b.Block]))
	})
	return project(p, seq)
}

// GPipeRounds is GPipe in rounds of k micro-batches, one round after
// another on every device, with the largest k whose peak memory fits the
// budget: a schedule under the budget wherever GPipe of one micro-batch
// at a time fits (with the activations kept, that is wherever any
// schedule does on a pipeline: schedule.LeastMemory). Not a method of
// its own: a fallback for callers that need some schedule under a
// budget (package hybrid). Where even k = 1 is over the budget it
// returns that schedule with ErrOverBudget.
func GPipeRounds(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "gpipe-rounds"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, err
	}
	fits := func(k int) bool {
		for d, m := range peakMemory(p, gpipeOrders(p, n, k)) {
			if b := p.Budget(d, memory); b > 0 && m > b {
				return false
			}
		}
		return true
	}
	// Peak memory grows with the round: the largest k that fits.
	lo, hi := 1, n
	for lo < hi {
		if k := (lo + hi + 1) / 2; fits(k) {
			lo = k
		} else {
			hi = k - 1
		}
	}
	return finish(name, p, n, memory, gpipeOrders(p, n, lo))
}
