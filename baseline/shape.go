package baseline

import (
	"fmt"
	"slices"

	"tessel/placement"
)

// The baselines recognise shapes from the structure of the blocks: chains
// of dependencies, which device each block runs on, and whether a block
// spans all devices. Block ids are never read.

// pipeline is a chain of S stages: stage j runs forward block fwd[j] and,
// in training, backward block bwd[j], both on device dev[j]. Forwards run
// in stage order and backwards in reverse (the v of 1F1B).
type pipeline struct {
	fwd, bwd []int // bwd is empty for inference
	dev      []int
}

func (q pipeline) stages() int { return len(q.fwd) }

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
	for _, d := range p.Deps {
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
// of stage j on the device of its forward, in reverse stage order.
func pipelineOf(p *placement.Placement, chain []int) (pipeline, error) {
	var q pipeline
	for _, i := range chain {
		if len(p.Blocks[i].Devices) != 1 {
			return q, fmt.Errorf("block %d spans %d devices, a pipeline stage runs on one", i, len(p.Blocks[i].Devices))
		}
	}
	k := 0
	for k < len(chain) && p.Blocks[chain[k]].Kind == placement.Forward {
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
	for j, i := range back {
		s := len(q.fwd) - 1 - j
		if p.Blocks[i].Kind != placement.Backward {
			return q, fmt.Errorf("a forward block follows a backward block in the chain")
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
	chain, ok := chainOf(p, all)
	if !ok {
		return pipeline{}, fmt.Errorf("the blocks do not form one chain")
	}
	for _, i := range chain {
		if isShard(p, i) {
			return pipeline{}, fmt.Errorf("block %d spans all devices", i)
		}
	}
	return pipelineOf(p, chain)
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
