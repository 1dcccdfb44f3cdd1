package torchcsv

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// MergeBackward is s with every input gradient and its weight gradient
// merged into one full backward, for a runtime that cannot split the
// backward (torchtitan under FlexAttention): PyTorch's _merge_bw turns an
// I followed at once by its W into a B; here every I becomes a B at the
// I's place in its rank's order, its W dropped, so that no I or W is left
// (where the W came later, its work now runs at the I's place). The B
// block of a stage takes the I's and the W's time and memory together, on
// the same device, with the I's dependencies; the schedule is compacted
// in the new order and verified, on the same placement otherwise (its
// transfers, capacities and channels). A schedule without split
// backwards comes back as it is; one that offloads or recomputes, or a
// placement whose blocks choose their devices, is refused.
func MergeBackward(s *schedule.Schedule) (*schedule.Schedule, error) {
	p := s.Placement
	stages, err := Chain(p)
	if err != nil {
		return nil, err
	}
	if off, rec := s.Count(); off+rec > 0 {
		return nil, fmt.Errorf("the schedule offloads %d and recomputes %d activations: merging the backward keeps neither", off, rec)
	}
	if p.Costs != nil || p.HasCandidates() {
		return nil, fmt.Errorf("placement %q: blocks that choose their devices", p.Name)
	}
	into := make([]int, p.K()) // new index of every block; -1 for a merged W
	merged := map[int]bool{}   // old indices of the I blocks that become B
	for i := range into {
		into[i] = i
	}
	for _, st := range stages {
		if st.Input >= 0 {
			merged[st.Input] = true
			into[st.Weight] = -1
		}
	}
	if len(merged) == 0 {
		return s, nil
	}
	weightOf, inputOf := map[int]int{}, map[int]int{} // I → its W, W → its I
	for _, st := range stages {
		if st.Input >= 0 {
			weightOf[st.Input], inputOf[st.Weight] = st.Weight, st.Input
		}
	}
	q := p.Bare(p.Name + "-merged-bw")
	q.Overlap = p.Overlap
	n := 0
	for i, b := range p.Blocks {
		if into[i] < 0 {
			continue
		}
		into[i] = n
		n++
		if merged[i] {
			w := p.Blocks[weightOf[i]]
			b = placement.Block{ID: b.ID + "+" + w.ID, Kind: placement.Backward, Devices: slices.Clone(b.Devices),
				Time: b.Time + w.Time, Memory: b.Memory + w.Memory}
		}
		q.Blocks = append(q.Blocks, b)
	}
	for w, in := range inputOf {
		into[w] = into[in] // a W's dependencies go to its B
	}
	old := map[placement.Dep]placement.Dep{} // new dependency → the old one it comes from
	for _, d := range p.Deps {
		e := placement.Dep{From: into[d.From], To: into[d.To]}
		if e.From == e.To {
			continue // I → W, now one block
		}
		if _, dup := old[e]; dup {
			continue // a forward to both its I and its W
		}
		old[e] = d
		q.Deps = append(q.Deps, e)
	}
	for e, d := range old {
		if t, ok := p.Transfers[d]; ok {
			if q.Transfers == nil {
				q.Transfers = map[placement.Dep]int{}
			}
			q.Transfers[e] = t
		}
		if z, ok := p.Sizes[d]; ok {
			if q.Sizes == nil {
				q.Sizes = map[placement.Dep]float64{}
			}
			q.Sizes[e] = z
		}
		if l, ok := p.Lanes[d]; ok {
			if q.Lanes == nil {
				q.Lanes = map[placement.Dep][]int{}
			}
			q.Lanes[e] = slices.Clone(l)
		}
	}
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("merged placement: %w", err)
	}
	ref := func(r schedule.Ref) schedule.Ref { return schedule.Ref{Block: into[r.Block], Micro: r.Micro} }
	var orders [][]schedule.Ref
	for _, order := range schedule.Orders(s) {
		var o []schedule.Ref
		for _, r := range order {
			if _, w := inputOf[r.Block]; !w {
				o = append(o, ref(r))
			}
		}
		orders = append(orders, o)
	}
	var pairs []schedule.Pair
	for _, pr := range s.Pairs {
		pairs = append(pairs, schedule.Pair{Forward: ref(pr.Forward), Backward: ref(pr.Backward)})
	}
	c, err := compact.Compact(spec.New(q, s.MicroBatches), compact.Keep{Orders: orders, Pairs: pairs})
	if err != nil {
		return nil, fmt.Errorf("the merged orders cannot run: %w", err)
	}
	out := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: c.Instances, Pairs: pairs}
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("the merged schedule: %w", err)
	}
	return out, nil
}
