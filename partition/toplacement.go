package partition

import (
	"fmt"
	"math"
	"sort"

	"github.com/tessel-pp/tessel/placement"
)

// PlacementOptions say how a split becomes a placement.
type PlacementOptions struct {
	Name string
	// TimeUnit is the time of one placement time step: a block of load t
	// gets time max(1, round(t / TimeUnit)). 0 chooses one (AutoTimeUnit).
	TimeUnit float64
	// MemoryUnit, when > 0, gives a forward block the memory
	// ⌈Σ activations / MemoryUnit⌉ of its stage's layers (profiles
	// only); otherwise every forward block of a training model takes 1,
	// the Tessel paper's convention, except for a profile in bytes, whose
	// unit is then AutoMemoryUnit's. Its backward (or weight) block frees
	// as much; inference blocks take 0.
	MemoryUnit float64
	// Devices maps the split's stages, in pipeline order, to placement
	// devices (the loop and V orders of chunked placements); nil puts
	// stage i on device i.
	Devices []int
}

// Converted is a placement made from a split, with what rounding cost.
type Converted struct {
	Placement *placement.Placement
	TimeUnit  float64
	// RoundingError is the largest change of a block's time by rounding
	// (|rounded·unit − load|), relative to the largest device load (a
	// relative error per block would be huge for the tiny blocks of
	// operator graphs, which round up to one step); MaxLoadError is the
	// relative change of the largest device load.
	RoundingError, MaxLoadError float64
	// StageBlocks lists, per stage in pipeline order, the indices of its
	// blocks.
	StageBlocks [][]int
	// MemoryUnit is the model memory (bytes for a profile in bytes) of
	// one placement memory unit; 0 under the Tessel paper's convention
	// (every forward block 1, whatever its activations).
	MemoryUnit float64
	// Activation and Checkpoint are, per block, what one micro-batch of a
	// forward block stashes and what it keeps when recomputed, in the
	// model's memory (0 for other blocks and for graphs without
	// activations).
	Activation, Checkpoint []float64
	// Static is, per stage in pipeline order, the memory its device holds
	// for good (parameters, gradients, optimizer state).
	Static []float64
}

// blockKey is one block of a placement made from a split: the nodes of one
// pass on one device, in one phase (always 0 for contiguous splits).
type blockKey struct {
	stage, phase int
	kind         placement.Kind
}

// ToPlacement turns a split into a placement: each stage's forward nodes
// become a forward block on its device, its backward nodes a backward
// block (or an input and a weight block where the profile splits the
// backward), and every edge between blocks a dependency. A block's time is
// the stage's load in that pass, transfers included, in TimeUnit steps.
// Where a stage's nodes are not contiguous (non-contiguous splits, §5.2),
// they are cut into phases, as the paper cuts a device into virtual
// sub-devices, so that the blocks stay acyclic.
func ToPlacement(s *Split, opt PlacementOptions) (*Converted, error) {
	g := s.Graph
	n := len(g.Nodes)
	stageOf := make([]int, g.Accelerators+g.CPUs)
	for i := range stageOf {
		stageOf[i] = -1
	}
	for i, st := range s.Stages {
		stageOf[st.Device] = i
	}
	devices := opt.Devices
	if devices == nil {
		for i := range s.Stages {
			devices = append(devices, i)
		}
	}
	if len(devices) != len(s.Stages) {
		return nil, fmt.Errorf("%d devices for %d stages", len(devices), len(s.Stages))
	}
	nd := 0
	for _, d := range devices {
		nd = max(nd, d+1)
	}
	split := false // does the profile split backward into input and weight?
	for _, v := range g.Nodes {
		if v.Backward && v.Input+v.Weight > 0 {
			split = true
		}
	}
	succ := g.succ()
	order := topo(n, succ)
	// Phases: along an edge between stages, or between passes, the phase
	// grows by one; the blocks (stage, phase, pass) are then acyclic. For
	// a contiguous split every stage keeps one phase per pass.
	phase := make([]int, n)
	if !s.Contiguous {
		for _, v := range order {
			for _, w := range succ[v] {
				step := 0
				if s.Device[v] != s.Device[w] || g.Nodes[v].Backward != g.Nodes[w].Backward {
					step = 1
				}
				phase[w] = max(phase[w], phase[v]+step)
			}
		}
	}
	forwardOf := map[int]int{} // a profile layer's forward node
	for v, x := range g.Nodes {
		if !x.Backward && x.Layer >= 0 {
			if _, ok := forwardOf[x.Layer]; !ok {
				forwardOf[x.Layer] = v
			}
		}
	}
	kindOf := func(v int) placement.Kind {
		if !g.Nodes[v].Backward {
			return placement.Forward
		}
		if split {
			return placement.Input
		}
		return placement.Backward
	}
	key := func(v int) blockKey {
		return blockKey{stageOf[s.Device[v]], phase[v], kindOf(v)}
	}
	// Block loads: processing plus the transfers this device pays, each
	// counted toward the block of the node that sends or receives it.
	load := map[blockKey]float64{}
	weight := map[blockKey]float64{}
	act := map[blockKey]float64{}
	ckpt := map[blockKey]float64{}
	static := make([]float64, len(s.Stages))
	cpu := func(v int) bool { return s.Device[v] >= g.Accelerators }
	for v := range n {
		k := key(v)
		t := g.Nodes[v].Acc
		if cpu(v) {
			t = g.Nodes[v].CPU
		}
		if split && g.Nodes[v].Backward {
			t -= g.Nodes[v].Weight
			weight[k] += g.Nodes[v].Weight
		}
		load[k] += t
		if g.Activations != nil {
			act[k] += g.Activations[v]
		}
		if g.Checkpoints != nil {
			ckpt[k] += g.Checkpoints[v]
		}
		if g.Static != nil && k.stage >= 0 {
			static[k.stage] += g.Static[v]
		}
	}
	for v, ws := range succ {
		c := g.Nodes[v].Comm
		if c == 0 {
			continue
		}
		paid := map[int]bool{}
		for _, w := range ws {
			if s.Device[w] != s.Device[v] && !paid[s.Device[v]] {
				paid[s.Device[v]] = true
				if !cpu(v) {
					load[key(v)] += c
				}
			}
		}
		for _, w := range ws {
			if s.Device[w] != s.Device[v] && !paid[s.Device[w]] {
				paid[s.Device[w]] = true
				if !cpu(w) {
					load[key(w)] += c
				}
			}
		}
	}
	keys := make([]blockKey, 0, len(load))
	for k := range load {
		keys = append(keys, k)
	}
	rank := map[placement.Kind]int{placement.Forward: 0, placement.Backward: 1, placement.Input: 1, placement.Weight: 2}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if rank[a.kind] != rank[b.kind] {
			return rank[a.kind] < rank[b.kind]
		}
		if a.kind == placement.Forward {
			if a.stage != b.stage {
				return a.stage < b.stage
			}
			return a.phase < b.phase
		}
		if a.stage != b.stage {
			return a.stage > b.stage
		}
		return a.phase > b.phase
	})
	if split {
		var ws []blockKey
		for _, k := range keys {
			if k.kind == placement.Input {
				ws = append(ws, blockKey{k.stage, k.phase, placement.Weight})
			}
		}
		keys = append(keys, ws...)
	}
	loadOf := func(k blockKey) float64 {
		if k.kind == placement.Weight {
			return weight[blockKey{k.stage, k.phase, placement.Input}]
		}
		return load[k]
	}
	unit := opt.TimeUnit
	if unit <= 0 {
		var ts []float64
		for _, k := range keys {
			ts = append(ts, loadOf(k))
		}
		unit = AutoTimeUnit(ts)
	}
	memUnit := opt.MemoryUnit
	if memUnit <= 0 && g.Bytes {
		largest := 0.0
		for _, a := range act {
			largest = math.Max(largest, a)
		}
		memUnit = AutoMemoryUnit(largest)
	}
	// The forward block whose activation a gradient block frees: the
	// block of the forward nodes of its layers (a non-contiguous split
	// numbers the two passes' phases apart), else its own phase's.
	freed := func(k blockKey) blockKey {
		f := blockKey{k.stage, k.phase, placement.Forward}
		if k.kind == placement.Weight {
			k.kind = placement.Input
		}
		for v := range n {
			if l := g.Nodes[v].Layer; l >= 0 && g.Nodes[v].Backward && key(v) == k {
				if fv, ok := forwardOf[l]; ok {
					return key(fv)
				}
			}
		}
		return f
	}
	c := &Converted{TimeUnit: unit, StageBlocks: make([][]int, len(s.Stages)), MemoryUnit: memUnit, Static: static}
	p := &placement.Placement{Name: opt.Name, Devices: nd}
	index := map[blockKey]int{}
	training := g.Training()
	devLoad := make([]float64, nd)
	devExact := make([]float64, nd)
	for _, k := range keys {
		t := loadOf(k)
		steps := max(1, int(math.Round(t/unit)))
		c.RoundingError = math.Max(c.RoundingError, math.Abs(float64(steps)*unit-t))
		devLoad[devices[k.stage]] += float64(steps) * unit
		devExact[devices[k.stage]] += t
		mem := 0
		if training {
			m := 1
			if memUnit > 0 {
				m = int(math.Ceil(act[freed(k)]/memUnit - 1e-9))
			}
			switch k.kind {
			case placement.Forward:
				mem = m
			case placement.Backward, placement.Weight:
				mem = -m
			}
		}
		id := fmt.Sprintf("%c%d", letter(k.kind), k.stage)
		if !s.Contiguous {
			id = fmt.Sprintf("%c%d.%d", letter(k.kind), k.stage, k.phase)
		}
		a, cp := 0.0, 0.0
		if k.kind == placement.Forward && training {
			a, cp = act[k], ckpt[k]
		}
		c.Activation, c.Checkpoint = append(c.Activation, a), append(c.Checkpoint, cp)
		index[k] = len(p.Blocks)
		c.StageBlocks[k.stage] = append(c.StageBlocks[k.stage], len(p.Blocks))
		b := placement.Block{ID: id, Kind: k.kind, Devices: []int{devices[k.stage]}, Time: steps, Memory: mem}
		if g.Bytes && training && k.kind == placement.Forward && mem > 0 {
			// The memory model's decisions (OptPipe's offload, activation
			// checkpointing), declared for --offload and --recompute.
			if ck := int(math.Ceil(cp/memUnit - 1e-9)); ck < mem {
				b.Recompute, b.Checkpoint = true, ck
			}
			if g.HostBandwidth > 0 {
				b.Offload = max(1, int(math.Round(a/g.HostBandwidth/unit)))
			}
		}
		p.Blocks = append(p.Blocks, b)
	}
	maxR, maxE := 0.0, 0.0
	for d := range nd {
		maxR, maxE = math.Max(maxR, devLoad[d]), math.Max(maxE, devExact[d])
	}
	if maxE > 0 {
		c.MaxLoadError = math.Abs(maxR-maxE) / maxE
		c.RoundingError /= maxE
	}
	seen := map[[2]int]bool{}
	addDep := func(a, b int) {
		if a != b && !seen[[2]int{a, b}] {
			seen[[2]int{a, b}] = true
			p.Deps = append(p.Deps, placement.Dep{From: a, To: b})
		}
	}
	for v, ws := range succ {
		for _, w := range ws {
			addDep(index[key(v)], index[key(w)])
		}
	}
	if split {
		for k, i := range index {
			if k.kind == placement.Input {
				addDep(i, index[blockKey{k.stage, k.phase, placement.Weight}])
			}
		}
	}
	sort.Slice(p.Deps, func(i, j int) bool {
		if p.Deps[i].From != p.Deps[j].From {
			return p.Deps[i].From < p.Deps[j].From
		}
		return p.Deps[i].To < p.Deps[j].To
	})
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("placement of the split: %w", err)
	}
	c.Placement = p
	return c, nil
}

func letter(k placement.Kind) byte {
	info, _ := k.Info()
	return info.Letter
}

// maxAutoSteps bounds the largest block time AutoTimeUnit gives, before
// its division by k ≤ 10.
const maxAutoSteps = 50

// AutoTimeUnit chooses the time unit of a placement made from block loads
// ts: the smallest positive load (but at least the largest over 50)
// divided by the least k (1 ≤ k ≤ 10) that rounds every load within 5%, or
// by 10. Small integers keep the schedule search fast; the error is
// reported beside the placement.
func AutoTimeUnit(ts []float64) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, t := range ts {
		if t > 0 {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
	}
	if math.IsInf(lo, 1) {
		return 1
	}
	// Blocks far smaller than the largest round up to one step rather than
	// blowing every other time up (the error is reported).
	lo = math.Max(lo, hi/maxAutoSteps)
	for k := 1; k <= 10; k++ {
		u := lo / float64(k)
		worst := 0.0
		for _, t := range ts {
			if t > 0 {
				worst = math.Max(worst, math.Abs(math.Max(1, math.Round(t/u))*u-t)/t)
			}
		}
		if worst <= 0.05 {
			return u
		}
	}
	return lo / 10
}
