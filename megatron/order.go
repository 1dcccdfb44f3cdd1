package megatron

import (
	"fmt"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
	"github.com/tessel-pp/tessel/verify"
)

// Megatron-Core runs its own orders (megatron/core/pipeline_parallel/
// schedules.py): without virtual stages 1F1B, rank r warming up with
// P−r−1 forwards; with V virtual stages, interleaved 1F1B over its
// schedule table, micro-batches in groups of G
// (--microbatch-group-size-per-virtual-pipeline-stage, P by default):
// each group runs through every virtual stage in turn, forwards in stage
// order, backwards in reverse; rank r warms up with 2(P−r−1) + (V−1)G
// forwards, one more with the all-to-all overlap, which then runs each
// steady forward with a backward as one overlapped pair.

// OrderOptions say which of Megatron-Core's orders Order builds.
type OrderOptions struct {
	// Group is the micro-batch group size G (0: the pipeline size).
	Group int
	// Overlap is --overlap-moe-expert-parallel-comm: one more warmup
	// forward, and every steady forward paired with its backward.
	Overlap bool
}

// CheckGroup applies Megatron-Core's rules on the group size G of n
// micro-batches on pp ranks: P ≤ G ≤ n, and the last group, n mod G, empty
// or at least P.
func CheckGroup(g, n, pp int) error {
	if g < pp || g > n {
		return fmt.Errorf("micro-batch group size %d: Megatron-Core takes %d (the pipeline size) to %d (the micro-batches)", g, pp, n)
	}
	if r := n % g; r > 0 && r < pp {
		return fmt.Errorf("micro-batch group size %d: the last group of %d micro-batches holds %d, fewer than the pipeline size %d, which Megatron-Core refuses", g, n, r, pp)
	}
	return nil
}

// table is Megatron-Core's schedule table (get_schedule_table): the
// (micro-batch, virtual stage) of every forward of a rank, in order.
func table(n, v, g int) [][2]int {
	var out [][2]int
	for lo := 0; lo < n; lo += g {
		hi := min(lo+g, n)
		for c := range v {
			for m := lo; m < hi; m++ {
				out = append(out, [2]int{m, c})
			}
		}
	}
	return out
}

// Order is Megatron-Core's schedule of sp: its micro-batches on its
// placement, a chain of stages on Megatron-Core's ranks (stage i on device
// i mod P, as Layout.Placement builds it); its orders, compacted, with the
// overlapped pairs where opt.Overlap (the placement needs an overlap rule
// then). A weight gradient runs right after its input gradient. The
// schedule is verified against sp's memory budget.
func Order(sp spec.Spec, opt OrderOptions) (*schedule.Schedule, error) {
	p, n := sp.Placement, sp.MicroBatches
	if p == nil {
		return nil, fmt.Errorf("no placement")
	}
	stages, err := torchcsv.Chain(p)
	if err != nil {
		return nil, err
	}
	P := p.Devices
	if len(stages)%P != 0 {
		return nil, fmt.Errorf("%d stages on %d ranks: Megatron-Core holds the same number on every rank", len(stages), P)
	}
	for i, st := range stages {
		if st.Device != i%P {
			return nil, fmt.Errorf("stage %d is on device %d: Megatron-Core runs stage i on rank i mod %d", i, st.Device, P)
		}
	}
	V := len(stages) / P
	g := opt.Group
	if g == 0 {
		g = P
	}
	if V > 1 {
		if err := CheckGroup(g, n, P); err != nil {
			return nil, err
		}
	}
	if opt.Overlap && p.Overlap == nil {
		return nil, fmt.Errorf("overlapped forward and backward need the placement's overlap time")
	}
	grad := func(i int) int {
		if stages[i].Backward >= 0 {
			return stages[i].Backward
		}
		return stages[i].Input
	}
	tab := table(n, V, g)
	if V == 1 {
		tab = tab[:0]
		for m := range n {
			tab = append(tab, [2]int{m, 0})
		}
	}
	orders := make([][]schedule.Ref, P)
	var pairs []schedule.Pair
	for r := range P {
		f := func(k int) schedule.Ref {
			return schedule.Ref{Block: stages[tab[k][1]*P+r].Forward, Micro: tab[k][0]}
		}
		b := func(k int) schedule.Ref { // backwards run the virtual stages in reverse
			return schedule.Ref{Block: grad((V-1-tab[k][1])*P + r), Micro: tab[k][0]}
		}
		total := len(tab)
		w := P - r - 1
		if V > 1 {
			w = 2*(P-r-1) + (V-1)*g
			if opt.Overlap {
				w++
			}
		}
		w = min(w, total)
		var order []schedule.Ref
		back := func(k int) {
			ref := b(k)
			order = append(order, ref)
			for i, st := range stages {
				if st.Input == ref.Block {
					order = append(order, schedule.Ref{Block: stages[i].Weight, Micro: ref.Micro})
				}
			}
		}
		for k := range w {
			order = append(order, f(k))
		}
		for k := range total - w {
			order = append(order, f(w+k))
			if opt.Overlap {
				pairs = append(pairs, schedule.Pair{Forward: f(w + k), Backward: b(k)})
			}
			back(k)
		}
		for k := total - w; k < total; k++ {
			back(k)
		}
		orders[r] = order
	}
	c, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: orders, Pairs: pairs})
	if err != nil {
		return nil, fmt.Errorf("Megatron-Core's order: %w", err)
	}
	s := &schedule.Schedule{Spec: sp, Instances: c.Instances, Pairs: pairs}
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("Megatron-Core's order: %w", err)
	}
	return s, nil
}
