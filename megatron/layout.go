// Package megatron carries tessel's plans to Megatron-Core and back: it
// reads a pipeline layout (--pipeline-model-parallel-layout) into the
// stages Megatron-Core unrolls it to and the placement they describe,
// builds Megatron-Core's own interleaved 1F1B orders, and writes the
// arguments that make Megatron-Core run a plan, refusing what is known to
// hang it.
//
// It takes placements, specs and schedules, not solvers: it imports
// placement, spec, schedule, partition (the layout's syntax) and torchcsv
// (the chain of stages), nothing above.
package megatron

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
)

// Layout is a Megatron-Core pipeline layout as Megatron-Core unrolls it:
// Stages in layout order, stage i on pipeline rank i mod PP as its virtual
// stage i div PP; each stage its layers' symbols (E embedding, t
// transformer layer, m MTP layer, L loss), possibly none (an empty
// stage).
type Layout struct {
	PP, VPP int
	Stages  []string
	// Layers and MTP count the transformer and MTP layers (--num-layers,
	// --mtp-num-layers).
	Layers, MTP int
}

// LayoutOptions are what a layout string is checked against; 0 leaves a
// count unchecked (VPP: taken from the layout).
type LayoutOptions struct {
	Layers, PP, VPP int
}

// maxStages bounds a layout's stages, far beyond any pipeline.
const maxStages = 1 << 12

// ParseLayout reads a layout string (partition.ParseMegatronLayout's
// syntax: "|" between stages, X*N and (…)*N repeats, commas ignored) and
// checks it as Megatron-Core does (PipelineParallelLayerLayout and its
// validate_layer_layout): a stage count that the pipeline size divides,
// giving the virtual size (which opt.VPP, when set, must equal); the
// embedding first and the loss last, once each; opt.Layers transformer
// layers; every MTP layer after the last transformer layer, all in one
// stage, the last virtual stage of a rank other than the first. Errors
// are one line saying which rule fails.
func ParseLayout(s string, opt LayoutOptions) (*Layout, error) {
	switch {
	case opt.PP < 1:
		return nil, fmt.Errorf("pipeline size %d: want ≥ 1", opt.PP)
	case opt.Layers < 0 || opt.VPP < 0:
		return nil, fmt.Errorf("negative layer count or virtual size")
	}
	stages, err := partition.ParseMegatronLayout(s)
	if err != nil {
		return nil, err
	}
	if len(stages) > maxStages {
		return nil, fmt.Errorf("layout %q: %d stages, more than %d", s, len(stages), maxStages)
	}
	l := &Layout{PP: opt.PP, Stages: stages}
	if len(stages)%opt.PP != 0 {
		return nil, fmt.Errorf("layout %q has %d stages: Megatron-Core needs a multiple of the pipeline size %d", s, len(stages), opt.PP)
	}
	l.VPP = len(stages) / opt.PP
	if opt.VPP > 0 && opt.VPP != l.VPP {
		return nil, fmt.Errorf("layout %q has %d stages, %d per rank of %d, not the virtual size %d", s, len(stages), l.VPP, opt.PP, opt.VPP)
	}
	flat := strings.Join(stages, "")
	switch {
	case flat == "" || flat[0] != 'E':
		return nil, fmt.Errorf("layout %q: the first layer must be the embedding E", s)
	case flat[len(flat)-1] != 'L':
		return nil, fmt.Errorf("layout %q: the last layer must be the loss L", s)
	case strings.Count(flat, "E") != 1 || strings.Count(flat, "L") != 1:
		return nil, fmt.Errorf("layout %q: one embedding E and one loss L", s)
	}
	l.Layers, l.MTP = strings.Count(flat, "t"), strings.Count(flat, "m")
	if opt.Layers > 0 && l.Layers != opt.Layers {
		return nil, fmt.Errorf("layout %q has %d transformer layers, not --num-layers %d", s, l.Layers, opt.Layers)
	}
	if l.MTP > 0 {
		if i := strings.IndexByte(flat, 'm'); strings.Contains(flat[i:], "t") {
			return nil, fmt.Errorf("layout %q: every transformer layer t before the MTP layers m", s)
		}
		for i, st := range stages {
			c := strings.Count(st, "m")
			if c == 0 {
				continue
			}
			rank, virtual := i%l.PP, i/l.PP
			switch {
			case c != l.MTP:
				return nil, fmt.Errorf("layout %q: stage %d holds %d of the %d MTP layers: Megatron-Core keeps them in one stage", s, i, c, l.MTP)
			case virtual != l.VPP-1:
				return nil, fmt.Errorf("layout %q: stage %d (rank %d, virtual stage %d) holds MTP layers: Megatron-Core keeps them in a rank's last virtual stage", s, i, rank, virtual)
			case rank == 0 && l.PP > 1:
				return nil, fmt.Errorf("layout %q: stage %d holds MTP layers on the first rank, where Megatron-Core allows none", s, i)
			}
		}
	}
	return l, nil
}

// String is the layout string, each stage's runs of one symbol as X*N
// (partition's form); an empty stage is empty between its "|".
func (l *Layout) String() string {
	parts := make([]string, len(l.Stages))
	for i, st := range l.Stages {
		parts[i] = partition.CompressRuns(st)
	}
	return strings.Join(parts, "|")
}

// Rank is the pipeline rank of layout stage i.
func (l *Layout) Rank(i int) int { return i % l.PP }

// Empty lists the stages without a transformer or MTP layer (nothing, or
// the embedding or the loss alone).
func (l *Layout) Empty() []int {
	var out []int
	for i, st := range l.Stages {
		if !strings.ContainsAny(st, "tm") {
			out = append(out, i)
		}
	}
	return out
}

// PlacementOptions give a layout's blocks their times and memory, per
// layer (a stage's are its layers' sum), and say how it trains.
type PlacementOptions struct {
	Name string
	// Per layer: every symbol (E, t, m, L) counts as one layer.
	ForwardTime, BackwardTime, InputTime, WeightTime         int
	ForwardMemory, BackwardMemory, InputMemory, WeightMemory int
	// SplitBackward trains each stage with an input and a weight block
	// rather than a backward block.
	SplitBackward bool
}

// Placement is the placement the layout describes: one device per rank;
// stage i a forward block f<i> on rank i mod PP and a backward block b<i>
// (or an input block i<i> and a weight block w<i>), chained as a pipeline
// (f<i> → f<i+1>, the last forward → its backward, the backward of i+1 →
// that of i, i<i> → w<i>). A stage of k layers takes k times the per-layer
// time and memory; an empty stage, which only passes its input on, takes
// the least time a block can take (1) and no memory.
func (l *Layout) Placement(opt PlacementOptions) (*placement.Placement, error) {
	if opt.Name == "" {
		opt.Name = "megatron-pp" + strconv.Itoa(l.PP) + "-vpp" + strconv.Itoa(l.VPP)
	}
	p := &placement.Placement{Name: opt.Name, Devices: l.PP}
	add := func(id string, kind placement.Kind, dev, layers, t, m int) (int, error) {
		tt, mm := int64(layers)*int64(t), int64(layers)*int64(m)
		if tt > placement.MaxTime || mm > placement.MaxMemory || mm < -placement.MaxMemory {
			return 0, fmt.Errorf("stage of %s: %d layers of time %d and memory %d exceed a block's largest time %d or memory %d",
				id, layers, t, m, placement.MaxTime, placement.MaxMemory)
		}
		p.Blocks = append(p.Blocks, placement.Block{ID: id, Kind: kind, Devices: []int{dev}, Time: max(int(tt), 1), Memory: int(mm)})
		return len(p.Blocks) - 1, nil
	}
	S := len(l.Stages)
	fwd, grad, wgt := make([]int, S), make([]int, S), make([]int, S)
	var err error
	for i, st := range l.Stages {
		if fwd[i], err = add("f"+strconv.Itoa(i), placement.Forward, l.Rank(i), len(st), opt.ForwardTime, opt.ForwardMemory); err != nil {
			return nil, err
		}
	}
	for i := S - 1; i >= 0; i-- {
		k := len(l.Stages[i])
		if opt.SplitBackward {
			grad[i], err = add("i"+strconv.Itoa(i), placement.Input, l.Rank(i), k, opt.InputTime, opt.InputMemory)
		} else {
			grad[i], err = add("b"+strconv.Itoa(i), placement.Backward, l.Rank(i), k, opt.BackwardTime, opt.BackwardMemory)
		}
		if err != nil {
			return nil, err
		}
	}
	if opt.SplitBackward {
		for i := S - 1; i >= 0; i-- {
			if wgt[i], err = add("w"+strconv.Itoa(i), placement.Weight, l.Rank(i), len(l.Stages[i]), opt.WeightTime, opt.WeightMemory); err != nil {
				return nil, err
			}
		}
	}
	for i := 0; i+1 < S; i++ {
		p.Deps = append(p.Deps, placement.Dep{From: fwd[i], To: fwd[i+1]})
	}
	p.Deps = append(p.Deps, placement.Dep{From: fwd[S-1], To: grad[S-1]})
	for i := S - 1; i > 0; i-- {
		p.Deps = append(p.Deps, placement.Dep{From: grad[i], To: grad[i-1]})
	}
	if opt.SplitBackward {
		for i := S - 1; i >= 0; i-- {
			p.Deps = append(p.Deps, placement.Dep{From: grad[i], To: wgt[i]})
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}
