// Package recompute is the recompute policy that training frameworks
// implement, beside tessel's per-instance decisions: per pipeline stage,
// the same decision for every micro-batch — recompute k of the stage's
// layers in its backward pass, keep the others (Megatron-Core's
// --recompute-granularity full --recompute-method block
// --recompute-num-layers k; a torchtitan activation-checkpointing policy
// that wraps those transformer blocks).
//
// Fit finds the least k of every stage that lets its device hold the
// micro-batches 1F1B keeps in flight there; Apply turns a policy into the
// split's placement with the policy's costs (less memory per forward, the
// second forward runs in the gradient block's time); Compare searches that
// placement with the same search as the per-instance decisions (package
// plan) and chooses the faster of the two.
package recompute

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
)

// Layer is one layer of a stage that can be recomputed: its activation
// is more than the checkpoint it keeps when recomputed.
type Layer struct {
	Name string
	// Activation and Checkpoint are what one micro-batch keeps of it
	// without and with recomputation, in the model's memory; Forward is
	// its forward time on an accelerator, in the model's time.
	Activation, Checkpoint, Forward float64
}

// Stage is one stage's policy: the first Recompute of its Layers are
// recomputed in every micro-batch (Megatron-Core's block method counts
// from a stage's first layer too).
type Stage struct {
	Layers    []Layer
	Recompute int
}

// Policy is one Stage per stage of the split, in pipeline order.
type Policy struct {
	Stages []Stage
}

// Any reports whether some stage recomputes a layer.
func (p Policy) Any() bool {
	for _, s := range p.Stages {
		if s.Recompute > 0 {
			return true
		}
	}
	return false
}

// Counts is every stage's number of recomputed layers.
func (p Policy) Counts() []int {
	out := make([]int, len(p.Stages))
	for i, s := range p.Stages {
		out[i] = s.Recompute
	}
	return out
}

// Max is the most layers a stage recomputes.
func (p Policy) Max() int {
	k := 0
	for _, s := range p.Stages {
		k = max(k, s.Recompute)
	}
	return k
}

// Uniform is p as a framework with one number of layers for every stage
// runs it (Megatron-Core's --recompute-num-layers): every stage recomputes
// min(Max, its layers).
func (p Policy) Uniform() Policy {
	k := p.Max()
	out := Policy{Stages: make([]Stage, len(p.Stages))}
	for i, s := range p.Stages {
		s.Recompute = min(k, len(s.Layers))
		out.Stages[i] = s
	}
	return out
}

// IsUniform reports whether p is its own Uniform.
func (p Policy) IsUniform() bool {
	k := p.Max()
	for _, s := range p.Stages {
		if s.Recompute != min(k, len(s.Layers)) {
			return false
		}
	}
	return true
}

// String says the policy in words, runs of stages alike written once:
// "recompute 3 of 4 layers on stage 0, 2 of 4 on stages 1-2", or
// "recompute nothing".
func (p Policy) String() string {
	var parts []string
	for i := 0; i < len(p.Stages); {
		j := i
		for j+1 < len(p.Stages) && p.Stages[j+1].Recompute == p.Stages[i].Recompute && len(p.Stages[j+1].Layers) == len(p.Stages[i].Layers) {
			j++
		}
		if k := p.Stages[i].Recompute; k > 0 {
			where := "stage " + strconv.Itoa(i)
			if j > i {
				where = fmt.Sprintf("stages %d-%d", i, j)
			}
			of := fmt.Sprintf("%d of %d", k, len(p.Stages[i].Layers))
			if len(parts) == 0 {
				of += " layers"
			}
			parts = append(parts, of+" on "+where)
		}
		i = j + 1
	}
	if len(parts) == 0 {
		return "recompute nothing"
	}
	return "recompute " + strings.Join(parts, ", ")
}

// Of is the policy that recomputes nothing on pr's split, with every
// stage's recomputable layers: the forward layers whose checkpoint is less
// than their activation, in the stage's order. It needs a contiguous
// split with one stage per device of a profile with activations and
// checkpoints (a layer profile in bytes).
func Of(pr *partition.Report) (Policy, error) {
	s, g, cv := pr.Split, pr.Graph, pr.Converted
	switch {
	case g == nil || s == nil || cv == nil:
		return Policy{}, fmt.Errorf("no split")
	case !g.Bytes || g.Activations == nil || g.Checkpoints == nil || cv.MemoryUnit <= 0:
		return Policy{}, fmt.Errorf("model %q has no activations and checkpoints in bytes: a per-stage policy needs a layer profile with activation_bytes and checkpoint_bytes", pr.Model)
	case !s.Contiguous:
		return Policy{}, fmt.Errorf("the split is not contiguous: a per-stage policy needs one forward block per stage")
	case len(s.Stages) != cv.Placement.Devices:
		return Policy{}, fmt.Errorf("%d stages on %d devices: a per-stage policy here needs one stage per device", len(s.Stages), cv.Placement.Devices)
	}
	pol := Policy{Stages: make([]Stage, len(s.Stages))}
	found := false
	for i, st := range s.Stages {
		for _, v := range st.Nodes {
			n := g.Nodes[v]
			if n.Backward || g.Checkpoints[v] >= g.Activations[v] {
				continue
			}
			pol.Stages[i].Layers = append(pol.Stages[i].Layers, Layer{Name: n.Name, Activation: g.Activations[v], Checkpoint: g.Checkpoints[v], Forward: n.Acc})
			found = true
		}
	}
	if !found {
		return Policy{}, fmt.Errorf("model %q: no layer keeps less when recomputed (checkpoint_bytes below activation_bytes)", pr.Model)
	}
	return pol, nil
}

// Saved is what recomputing the stage's first k layers saves of one
// micro-batch's activation, in the model's memory.
func (s Stage) Saved(k int) float64 {
	x := 0.0
	for _, l := range s.Layers[:k] {
		x += l.Activation - l.Checkpoint
	}
	return x
}

// Reserve is the memory a stage needs beyond what its micro-batches keep
// under s: the backward runs the recomputed layers again last, the first
// of the stage last of all, and a layer run again holds its whole
// activation beside the earlier layers' checkpoints, by when the kept
// layers (the later ones) have freed theirs. So the reserve is the
// largest activation less checkpoint of a recomputed layer, less what
// the kept layers freed (0 where that is more): with every layer
// recomputed, that layer's whole excess.
func (s Stage) Reserve() float64 {
	if s.Recompute == 0 {
		return 0
	}
	r, freed := 0.0, 0.0
	for _, l := range s.Layers[:s.Recompute] {
		r = math.Max(r, l.Activation-l.Checkpoint)
	}
	for _, l := range s.Layers[s.Recompute:] {
		freed += l.Activation
	}
	return math.Max(0, r-freed)
}

// recomputeTime is the forward time of the stage's first k layers, in the
// model's time.
func (s Stage) recomputeTime(k int) float64 {
	t := 0.0
	for _, l := range s.Layers[:k] {
		t += l.Forward
	}
	return t
}

// stageBlocks are a stage's forward block, the gradient block that needs
// its activation (its backward, or its input gradient) and the block that
// frees it (its backward, or its weight gradient).
type stageBlocks struct{ forward, consumer, free int }

func blocksOf(cv *partition.Converted, stage int) (stageBlocks, error) {
	p := cv.Placement
	sb := stageBlocks{-1, -1, -1}
	for _, i := range cv.StageBlocks[stage] {
		switch p.Blocks[i].Kind {
		case placement.Forward:
			sb.forward = i
		case placement.Backward:
			sb.consumer, sb.free = i, i
		case placement.Input:
			sb.consumer = i
		case placement.Weight:
			sb.free = i
		}
	}
	if sb.forward < 0 || sb.consumer < 0 || sb.free < 0 {
		return sb, fmt.Errorf("stage %d has no forward, or no gradient block", stage)
	}
	return sb, nil
}

// Apply is the split's converted placement cv under pol: a copy in which
// every stage's forward block keeps ⌈(activation − Saved(k)) / unit⌉ (its
// freeing block frees as much), its gradient block runs the k layers'
// forward again before its own work (their time added, rounded to the
// placement's steps), and RecomputedLayers records k. Per-instance
// recompute declarations are dropped: under the policy no schedule
// decides. An offload time shrinks with the activation it moves.
func Apply(cv *partition.Converted, pol Policy) (*partition.Converted, error) {
	if len(pol.Stages) != len(cv.StageBlocks) {
		return nil, fmt.Errorf("a policy of %d stages for a split of %d", len(pol.Stages), len(cv.StageBlocks))
	}
	if cv.MemoryUnit <= 0 {
		return nil, fmt.Errorf("the placement counts memory in blocks, not in the model's memory: a per-stage policy needs a profile in bytes")
	}
	out := *cv
	p := cv.Placement.Clone()
	out.Placement = p
	out.Activation = append([]float64(nil), cv.Activation...)
	out.Checkpoint = append([]float64(nil), cv.Checkpoint...)
	for st, s := range pol.Stages {
		if s.Recompute < 0 || s.Recompute > len(s.Layers) {
			return nil, fmt.Errorf("stage %d: recompute %d of %d layers", st, s.Recompute, len(s.Layers))
		}
		sb, err := blocksOf(cv, st)
		if err != nil {
			return nil, err
		}
		f := &p.Blocks[sb.forward]
		f.Recompute, f.Checkpoint = false, 0
		if s.Recompute == 0 {
			continue
		}
		act := cv.Activation[sb.forward]
		kept := act - s.Saved(s.Recompute)
		mem := int(math.Ceil(kept/cv.MemoryUnit - 1e-9))
		if f.Offload > 0 && act > 0 {
			f.Offload = max(1, int(math.Round(float64(f.Offload)*kept/act)))
		}
		if f.Activation > 0 && act > 0 {
			f.Activation *= kept / act
		}
		f.Memory, f.RecomputedLayers = mem, s.Recompute
		p.Blocks[sb.free].Memory = -mem
		c := &p.Blocks[sb.consumer]
		c.Time += int(math.Round(s.recomputeTime(s.Recompute) / cv.TimeUnit))
		if c.Time > placement.MaxTime {
			return nil, fmt.Errorf("stage %d: its gradient block with the recompute takes %d steps, more than %d", st, c.Time, placement.MaxTime)
		}
		out.Activation[sb.forward] = kept
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("placement under the policy: %w", err)
	}
	return &out, nil
}

// Fit is pol with every stage's least k at which its device holds the
// micro-batches 1F1B keeps in flight there — min(n, stages − s) at stage
// s — under its budget (budgets[d] in placement memory units, 0:
// unlimited), the stage's Reserve counted: the memory of those
// micro-batches and the reserve, each rounded up to whole units, at most
// the budget. Where even every layer recomputed does not fit, the stage
// recomputes every layer, and the schedule keeps fewer in flight.
func Fit(cv *partition.Converted, pol Policy, budgets []int, n int) (Policy, error) {
	if cv.MemoryUnit <= 0 {
		return Policy{}, fmt.Errorf("the placement counts memory in blocks, not in the model's memory: a per-stage policy needs a profile in bytes")
	}
	out := Policy{Stages: make([]Stage, len(pol.Stages))}
	for st, s := range pol.Stages {
		sb, err := blocksOf(cv, st)
		if err != nil {
			return Policy{}, err
		}
		d := cv.Placement.Blocks[sb.forward].Devices[0]
		budget := 0
		if d < len(budgets) {
			budget = budgets[d]
		}
		inflight := min(n, len(pol.Stages)-st)
		s.Recompute = 0
		for budget > 0 && s.Recompute < len(s.Layers) && !s.fits(cv, sb.forward, inflight, budget) {
			s.Recompute++
		}
		out.Stages[st] = s
	}
	return out, nil
}

// fits reports whether inflight micro-batches of the stage's forward
// block under s, and s's reserve, fit budget units.
func (s Stage) fits(cv *partition.Converted, forward, inflight, budget int) bool {
	unit := cv.MemoryUnit
	mem := int(math.Ceil((cv.Activation[forward]-s.Saved(s.Recompute))/unit - 1e-9))
	reserve := int(math.Ceil(s.Reserve()/unit - 1e-9))
	return inflight*mem+reserve <= budget
}
