package baseline

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// The baselines recognise shapes from the structure of the blocks: chains
// of dependencies, which device each block runs on, whether a block spans
// all devices, and each block's role (placement's Roles: forward, a
// gradient the chain waits for, a deferrable one), which is read from the
// graph too. Block ids and kinds are never read, and neither is a
// dependency that a path already implies (placement's ReducedDeps): the
// shape is read from the skeleton, the schedule timed on the placement
// itself.

// pipeline is a chain of S stages: stage j runs forward block fwd[j] and,
// in training, backward block bwd[j], both on device dev[j]. Forwards run
// in stage order and backwards in reverse (the v of 1F1B). With a split
// backward, bwd[j] is the input block of stage j and wgt[j] its weight
// block, which hangs off the chain: it depends on bwd[j] alone and nothing
// depends on it.
type pipeline struct {
	fwd, bwd []int // bwd is empty for inference
	wgt      []int // empty unless the backward is split
	dev      []int
}

func (q pipeline) stages() int { return len(q.fwd) }

func (q pipeline) split() bool { return len(q.wgt) > 0 }

// unsplit is q without its weight blocks: what a baseline times before the
// weight blocks are put back (withWeights).
func (q pipeline) unsplit() pipeline {
	q.wgt = nil
	return q
}

// weights separates the weight blocks among set from the other blocks:
// every weight block must depend on exactly one block, an input block on
// the same devices, that no other weight block depends on, and no block
// may depend on a weight block. wgt maps an input block to its weight
// block.
func weights(p *placement.Placement, set []int) (rest []int, wgt map[int]int, err error) {
	g := p.Skeleton()
	preds, succs := g.Preds(), g.Succs()
	roles := p.Roles()
	wgt = map[int]int{}
	for _, i := range set {
		if roles[i] != placement.RoleWeight {
			rest = append(rest, i)
			continue
		}
		if len(preds[i]) != 1 || len(succs[i]) != 0 {
			return nil, nil, fmt.Errorf("weight block %d must follow exactly one input block and precede none", i)
		}
		in := preds[i][0]
		if roles[in] != placement.RoleInput || !slices.Equal(p.Blocks[in].Devices, p.Blocks[i].Devices) {
			return nil, nil, fmt.Errorf("weight block %d does not follow an input block on its devices", i)
		}
		if _, dup := wgt[in]; dup {
			return nil, nil, fmt.Errorf("input block %d has two weight blocks", in)
		}
		wgt[in] = i
	}
	return rest, wgt, nil
}

// withWeights puts every weight block back into a sequence of instances
// that holds none: right after the instance of its input block (what one
// whole backward does).
func withWeights(p *placement.Placement, seq []schedule.Ref) []schedule.Ref {
	all := make([]int, p.K())
	for i := range all {
		all[i] = i
	}
	_, wgt, err := weights(p, all)
	if err != nil || len(wgt) == 0 {
		return seq
	}
	out := make([]schedule.Ref, 0, len(seq)+len(wgt)*len(seq)/max(1, p.K()-len(wgt)))
	for _, r := range seq {
		out = append(out, r)
		if w, ok := wgt[r.Block]; ok {
			out = append(out, schedule.Ref{Block: w, Micro: r.Micro})
		}
	}
	return out
}

// blocks lists the pipeline's blocks in chain order.
func (q pipeline) blocks() []int {
	out := slices.Clone(q.fwd)
	for j := len(q.bwd) - 1; j >= 0; j-- {
		out = append(out, q.bwd[j])
	}
	return out
}

// stagesPerDevice returns v when every device used by the pipeline holds
// exactly v of its stages and the stages visit the same cycle of L = S/v
// distinct devices v times (stage j on dev[j mod L]); ok is false otherwise.
func (q pipeline) stagesPerDevice() (v int, ok bool) {
	S := q.stages()
	L := 0
	seen := map[int]bool{}
	for _, d := range q.dev {
		if seen[d] {
			break
		}
		seen[d] = true
		L++
	}
	if L == 0 || S%L != 0 {
		return 0, false
	}
	for j := range q.dev {
		if q.dev[j] != q.dev[j%L] {
			return 0, false
		}
	}
	return S / L, true
}

// chunkStages reads the pipeline as v ≥ 1 chunks of L stages on the same
// L devices, each chunk visiting every device once (the loop and the V
// placements both): at[c][d] is the stage of chunk c on device d. ok is
// false otherwise.
func (q pipeline) chunkStages() (at []map[int]int, ok bool) {
	seen := map[int]bool{}
	for _, d := range q.dev {
		seen[d] = true
	}
	S, L := q.stages(), len(seen)
	if L == 0 || S%L != 0 {
		return nil, false
	}
	for c := range S / L {
		m := map[int]int{}
		for j := c * L; j < (c+1)*L; j++ {
			if _, dup := m[q.dev[j]]; dup {
				return nil, false
			}
			m[q.dev[j]] = j
		}
		at = append(at, m)
	}
	return at, true
}

// isShard reports whether block i spans all devices of a placement with
// more than one device (the paper's distributed operators).
func isShard(p *placement.Placement, i int) bool {
	return p.Devices > 1 && len(p.Blocks[i].Devices) == p.Devices
}

// chainOf returns the blocks of set (which must be closed under the
// dependencies of p) in dependency order when they form one chain: every
// block has at most one predecessor and one successor, and the chain
// visits them all.
func chainOf(p *placement.Placement, set []int) ([]int, bool) {
	in := map[int]bool{}
	for _, i := range set {
		in[i] = true
	}
	pred := map[int][]int{}
	succ := map[int][]int{}
	for _, d := range p.Skeleton().Deps {
		if !in[d.From] || !in[d.To] {
			continue
		}
		if !slices.Contains(succ[d.From], d.To) {
			succ[d.From] = append(succ[d.From], d.To)
			pred[d.To] = append(pred[d.To], d.From)
		}
	}
	head := -1
	for _, i := range set {
		if len(pred[i]) > 1 || len(succ[i]) > 1 {
			return nil, false
		}
		if len(pred[i]) == 0 {
			if head >= 0 {
				return nil, false
			}
			head = i
		}
	}
	if head < 0 {
		return nil, false
	}
	chain := []int{head}
	for cur := head; len(succ[cur]) == 1; {
		cur = succ[cur][0]
		chain = append(chain, cur)
	}
	return chain, len(chain) == len(set)
}

// components returns the weakly connected components of p's dependency
// graph, each sorted by block index, ordered by their lowest block.
func components(p *placement.Placement) [][]int {
	parent := make([]int, p.K())
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, d := range p.Deps {
		a, b := find(d.From), find(d.To)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	idx := map[int]int{}
	var out [][]int
	for i := range p.Blocks {
		r := find(i)
		k, ok := idx[r]
		if !ok {
			k = len(out)
			idx[r] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// pipelineOf reads a chain of single-device blocks as a pipeline: a run of
// forward blocks, then (in training) as many backward blocks, the backward
// of stage j on the device of its forward, in reverse stage order. The
// backward blocks are either all whole backwards or all input blocks, each
// with its weight block in wgt (from weights).
func pipelineOf(p *placement.Placement, chain []int, wgt map[int]int) (pipeline, error) {
	var q pipeline
	for _, i := range chain {
		if len(p.Blocks[i].Devices) != 1 {
			return q, fmt.Errorf("block %d spans %d devices, a pipeline stage runs on one", i, len(p.Blocks[i].Devices))
		}
	}
	roles := p.Roles()
	k := 0
	for k < len(chain) && roles[chain[k]] == placement.RoleForward {
		q.fwd = append(q.fwd, chain[k])
		q.dev = append(q.dev, p.Blocks[chain[k]].Devices[0])
		k++
	}
	if len(q.fwd) == 0 {
		return q, fmt.Errorf("the chain does not start with a forward block")
	}
	back := chain[k:]
	if len(back) == 0 {
		return q, nil
	}
	if len(back) != len(q.fwd) {
		return q, fmt.Errorf("%d forward stages but %d backward blocks after them", len(q.fwd), len(back))
	}
	q.bwd = make([]int, len(q.fwd))
	split := roles[back[0]] == placement.RoleInput
	if split {
		q.wgt = make([]int, len(q.fwd))
	}
	for j, i := range back {
		s := len(q.fwd) - 1 - j
		if !roles[i].Waited() {
			return q, fmt.Errorf("a forward block follows a backward block in the chain")
		}
		if (roles[i] == placement.RoleInput) != split {
			return q, fmt.Errorf("the chain mixes whole backward blocks and input blocks")
		}
		if split {
			w, ok := wgt[i]
			if !ok {
				return q, fmt.Errorf("input block %d has no weight block", i)
			}
			q.wgt[s] = w
		}
		if p.Blocks[i].Devices[0] != q.dev[s] {
			return q, fmt.Errorf("the backward of stage %d runs on device %d, its forward on device %d", s, p.Blocks[i].Devices[0], q.dev[s])
		}
		q.bwd[s] = i
	}
	return q, nil
}

// wholePipeline reads all of p as one pipeline.
func wholePipeline(p *placement.Placement) (pipeline, error) {
	all := make([]int, p.K())
	for i := range all {
		all[i] = i
	}
	rest, wgt, err := weights(p, all)
	if err != nil {
		return pipeline{}, err
	}
	chain, ok := chainOf(p, rest)
	if !ok {
		return pipeline{}, fmt.Errorf("the blocks do not form one chain")
	}
	for _, i := range chain {
		if isShard(p, i) {
			return pipeline{}, fmt.Errorf("block %d spans all devices", i)
		}
	}
	return pipelineOf(p, chain, wgt)
}

// subPlacement is the placement of the pipeline's blocks alone, chained,
// with the index map back to p: used to time a pipeline before other blocks
// are inserted around it. A link of the chain that is a dependency of p
// keeps its transfer time; one that stands for blocks left out has none.
func subPlacement(p *placement.Placement, q pipeline) (*placement.Placement, []int) {
	blocks := q.blocks()
	sub := &placement.Placement{Name: p.Name, Devices: p.Devices}
	for k, i := range blocks {
		sub.Blocks = append(sub.Blocks, p.Blocks[i])
		if k == 0 {
			continue
		}
		link := placement.Dep{From: k - 1, To: k}
		sub.Deps = append(sub.Deps, link)
		if c := p.Transfer(placement.Dep{From: blocks[k-1], To: i}); c != 0 {
			if sub.Transfers == nil {
				sub.Transfers = map[placement.Dep]int{}
			}
			sub.Transfers[link] = c
		}
	}
	return sub, blocks
}
