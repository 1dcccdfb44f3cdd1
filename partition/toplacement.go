package partition

import (
	"fmt"
	"math"
	"sort"

	"github.com/tessel-pp/tessel/limits"
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
	cv, err := newConverter(s, opt.Devices)
	if err != nil {
		return nil, err
	}
	cv.loads()
	if err := cv.emptyStages(); err != nil {
		return nil, err
	}
	keys := cv.blockKeys()
	unit := opt.TimeUnit
	if unit <= 0 {
		var ts []float64
		for _, k := range keys {
			ts = append(ts, cv.loadOf(k))
		}
		unit = AutoTimeUnit(ts)
	}
	memUnit := opt.MemoryUnit
	if memUnit <= 0 && cv.g.Bytes {
		largest := 0.0
		for _, a := range cv.act {
			largest = math.Max(largest, a)
		}
		memUnit = AutoMemoryUnit(largest)
	}
	c := &Converted{TimeUnit: unit, StageBlocks: make([][]int, len(s.Stages)), MemoryUnit: memUnit, Static: cv.static}
	p := &placement.Placement{Name: opt.Name, Devices: cv.nd}
	index, err := cv.blocks(c, p, keys)
	if err != nil {
		return nil, err
	}
	cv.deps(p, index)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("placement of the split: %w", err)
	}
	c.Placement = p
	return c, nil
}

// converter is ToPlacement's work on one split: where each node's block
// is, and what each block costs.
type converter struct {
	s *Split
	g *Graph
	// stageOf maps a split device to its stage (−1: none); devices maps a
	// stage to its placement device, of nd.
	stageOf, devices []int
	nd               int
	// split says the profile splits backward into input and weight.
	split bool
	succ  [][]int
	// phase of every node (0 for a contiguous split).
	phase []int
	// Per block: its load (processing and the transfers it pays), the
	// weight gradient's part of it, the activations and checkpoints of
	// its nodes; per stage, its static memory.
	load, weight, act, ckpt map[blockKey]float64
	static                  []float64
	// empties are the stages that hold no node, in pipeline order.
	empties []int
	// forwardOf is a profile layer's forward node.
	forwardOf map[int]int
}

func newConverter(s *Split, devices []int) (*converter, error) {
	g := s.Graph
	n := len(g.Nodes)
	cv := &converter{s: s, g: g, stageOf: make([]int, g.Accelerators+g.CPUs), devices: devices}
	for i := range cv.stageOf {
		cv.stageOf[i] = -1
	}
	for i, st := range s.Stages {
		cv.stageOf[st.Device] = i
	}
	if cv.devices == nil {
		for i := range s.Stages {
			cv.devices = append(cv.devices, i)
		}
	}
	if len(cv.devices) != len(s.Stages) {
		return nil, fmt.Errorf("%d devices for %d stages", len(cv.devices), len(s.Stages))
	}
	for _, d := range cv.devices {
		cv.nd = max(cv.nd, d+1)
	}
	for _, v := range g.Nodes {
		if v.Backward && v.Input+v.Weight > 0 {
			cv.split = true
		}
	}
	cv.forwardOf = map[int]int{}
	for v, x := range g.Nodes {
		if !x.Backward && x.Layer >= 0 {
			if _, ok := cv.forwardOf[x.Layer]; !ok {
				cv.forwardOf[x.Layer] = v
			}
		}
	}
	cv.succ = g.succ()
	order := topo(n, cv.succ)
	// Phases: along an edge between stages, or between passes, the phase
	// grows by one; the blocks (stage, phase, pass) are then acyclic. For
	// a contiguous split every stage keeps one phase per pass.
	cv.phase = make([]int, n)
	if !s.Contiguous {
		for _, v := range order {
			for _, w := range cv.succ[v] {
				step := 0
				if s.Device[v] != s.Device[w] || g.Nodes[v].Backward != g.Nodes[w].Backward {
					step = 1
				}
				cv.phase[w] = max(cv.phase[w], cv.phase[v]+step)
			}
		}
	}
	return cv, nil
}

// kindOf is node v's block kind; v < 0: an empty stage's gradient.
func (cv *converter) kindOf(v int) placement.Kind {
	if v >= 0 && !cv.g.Nodes[v].Backward {
		return placement.Forward
	}
	if cv.split {
		return placement.Input
	}
	return placement.Backward
}

func (cv *converter) key(v int) blockKey {
	return blockKey{cv.stageOf[cv.s.Device[v]], cv.phase[v], cv.kindOf(v)}
}

// freed is the forward block whose activation gradient block k frees:
// the block of the forward nodes of its layers (a non-contiguous split
// numbers the two passes' phases apart), else its own phase's.
func (cv *converter) freed(k blockKey) blockKey {
	f := blockKey{k.stage, k.phase, placement.Forward}
	if k.kind == placement.Weight {
		k.kind = placement.Input
	}
	for v, x := range cv.g.Nodes {
		if x.Layer >= 0 && x.Backward && cv.key(v) == k {
			if fv, ok := cv.forwardOf[x.Layer]; ok {
				return cv.key(fv)
			}
		}
	}
	return f
}

func (cv *converter) cpu(v int) bool { return cv.s.Device[v] >= cv.g.Accelerators }

// loads sums the blocks' loads: processing plus the transfers this
// device pays, each counted toward the block of the node that sends or
// receives it.
func (cv *converter) loads() {
	g, s := cv.g, cv.s
	cv.load, cv.weight = map[blockKey]float64{}, map[blockKey]float64{}
	cv.act, cv.ckpt = map[blockKey]float64{}, map[blockKey]float64{}
	cv.static = make([]float64, len(s.Stages))
	for v := range g.Nodes {
		k := cv.key(v)
		t := g.Nodes[v].Acc
		if cv.cpu(v) {
			t = g.Nodes[v].CPU
		}
		if cv.split && g.Nodes[v].Backward {
			t -= g.Nodes[v].Weight
			cv.weight[k] += g.Nodes[v].Weight
		}
		cv.load[k] += t
		if g.Activations != nil {
			cv.act[k] += g.Activations[v]
		}
		if g.Checkpoints != nil {
			cv.ckpt[k] += g.Checkpoints[v]
		}
		if g.Static != nil && k.stage >= 0 {
			cv.static[k.stage] += g.Static[v]
		}
	}
	for v, ws := range cv.succ {
		c := g.Nodes[v].Comm
		if c == 0 {
			continue
		}
		paid := map[int]bool{}
		for _, w := range ws {
			if s.Device[w] != s.Device[v] && !paid[s.Device[v]] {
				paid[s.Device[v]] = true
				if !cv.cpu(v) {
					cv.load[cv.key(v)] += c
				}
			}
		}
		for _, w := range ws {
			if s.Device[w] != s.Device[v] && !paid[s.Device[w]] {
				paid[s.Device[w]] = true
				if !cv.cpu(w) {
					cv.load[cv.key(w)] += c
				}
			}
		}
	}
}

// emptyStages gives every empty stage (Megatron-Core's layouts allow
// them) a forward and a backward (input and weight) block of no load:
// it only passes its input on, and the edges that cross it run through
// them. The first and the last stage may not be empty.
func (cv *converter) emptyStages() error {
	for i, st := range cv.s.Stages {
		if len(st.Nodes) == 0 {
			if i == 0 || i == len(cv.s.Stages)-1 {
				return fmt.Errorf("stage %d is empty: the first and the last stage hold layers", i)
			}
			cv.empties = append(cv.empties, i)
			cv.load[blockKey{i, 0, placement.Forward}] = 0
			cv.load[blockKey{i, 0, cv.kindOf(-1)}] = 0
		}
	}
	return nil
}

// blockKeys is the placement's blocks in order: forwards by stage and
// phase, then backwards (or input blocks) in reverse, then the weight
// blocks of a split backward.
func (cv *converter) blockKeys() []blockKey {
	keys := make([]blockKey, 0, len(cv.load))
	for k := range cv.load {
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
	if cv.split {
		var ws []blockKey
		for _, k := range keys {
			if k.kind == placement.Input {
				ws = append(ws, blockKey{k.stage, k.phase, placement.Weight})
			}
		}
		keys = append(keys, ws...)
	}
	return keys
}

// loadOf is a block's time. Every block is one action of the runtime:
// it pays the calibrated overhead once.
func (cv *converter) loadOf(k blockKey) float64 {
	if k.kind == placement.Weight {
		return cv.weight[blockKey{k.stage, k.phase, placement.Input}] + cv.g.ActionOverhead
	}
	return cv.load[k] + cv.g.ActionOverhead
}

// blocks adds a block to p for every key, in c's units, records what
// rounding cost in c, and returns every key's block index. It fails
// where a time or a memory in c's units is past its limit.
func (cv *converter) blocks(c *Converted, p *placement.Placement, keys []blockKey) (map[blockKey]int, error) {
	g, unit, memUnit := cv.g, c.TimeUnit, c.MemoryUnit
	index := map[blockKey]int{}
	training := g.Training()
	devLoad := make([]float64, cv.nd)
	devExact := make([]float64, cv.nd)
	for _, k := range keys {
		t := cv.loadOf(k)
		if t/unit > limits.Time {
			return nil, limits.Over(fmt.Sprintf("time steps of a block of stage %d (load %g, time unit %g: a larger --time-unit)", k.stage, t, unit), t/unit, limits.Time)
		}
		steps := max(1, int(math.Round(t/unit)))
		c.RoundingError = math.Max(c.RoundingError, math.Abs(float64(steps)*unit-t))
		devLoad[cv.devices[k.stage]] += float64(steps) * unit
		devExact[cv.devices[k.stage]] += t
		mem := 0
		if training && len(cv.s.Stages[k.stage].Nodes) > 0 {
			m := 1
			if memUnit > 0 {
				a := cv.act[cv.freed(k)] / memUnit
				if a > limits.Memory {
					return nil, limits.Over(fmt.Sprintf("memory units of the activations of stage %d (memory unit %g: a larger --memory-unit)", k.stage, memUnit), a, limits.Memory)
				}
				m = int(math.Ceil(a - 1e-9))
			}
			switch k.kind {
			case placement.Forward:
				mem = m
			case placement.Backward, placement.Weight:
				mem = -m
			}
		}
		id := fmt.Sprintf("%c%d", letter(k.kind), k.stage)
		if !cv.s.Contiguous {
			id = fmt.Sprintf("%c%d.%d", letter(k.kind), k.stage, k.phase)
		}
		a, cp := 0.0, 0.0
		if k.kind == placement.Forward && training {
			a, cp = cv.act[k], cv.ckpt[k]
		}
		c.Activation, c.Checkpoint = append(c.Activation, a), append(c.Checkpoint, cp)
		index[k] = len(p.Blocks)
		c.StageBlocks[k.stage] = append(c.StageBlocks[k.stage], len(p.Blocks))
		b := placement.Block{ID: id, Kind: k.kind, Devices: []int{cv.devices[k.stage]}, Time: steps, Memory: mem}
		if g.Bytes && training && k.kind == placement.Forward && mem > 0 {
			// The memory model's decisions (OptPipe's offload, activation
			// checkpointing), declared for --offload and --recompute.
			if ck := int(math.Ceil(cp/memUnit - 1e-9)); ck < mem {
				b.Recompute, b.Checkpoint = true, ck
			}
			if g.HostBandwidth > 0 {
				if o := a / g.HostBandwidth / unit; o > limits.Time {
					return nil, limits.Over(fmt.Sprintf("time steps of an offload of stage %d (time unit %g: a larger --time-unit)", k.stage, unit), o, limits.Time)
				}
				b.Offload = max(1, int(math.Round(a/g.HostBandwidth/unit)))
			}
		}
		p.Blocks = append(p.Blocks, b)
	}
	maxR, maxE := 0.0, 0.0
	for d := range cv.nd {
		maxR, maxE = math.Max(maxR, devLoad[d]), math.Max(maxE, devExact[d])
	}
	if maxE > 0 {
		c.MaxLoadError = math.Abs(maxR-maxE) / maxE
		c.RoundingError /= maxE
	}
	return index, nil
}

// deps adds p's dependencies: one per edge between blocks, and from each
// input block to its weight block, sorted.
func (cv *converter) deps(p *placement.Placement, index map[blockKey]int) {
	seen := map[[2]int]bool{}
	addDep := func(a, b int) {
		if a != b && !seen[[2]int{a, b}] {
			seen[[2]int{a, b}] = true
			p.Deps = append(p.Deps, placement.Dep{From: a, To: b})
		}
	}
	for v, ws := range cv.succ {
		for _, w := range ws {
			a, b := cv.key(v), cv.key(w)
			// Through the empty stages between the two: forwards in
			// pipeline order, gradients back.
			from := index[a]
			for _, e := range cv.empties {
				switch {
				case a.kind == placement.Forward && b.kind == placement.Forward && a.stage < e && e < b.stage:
					addDep(from, index[blockKey{e, 0, placement.Forward}])
					from = index[blockKey{e, 0, placement.Forward}]
				}
			}
			for i := len(cv.empties) - 1; i >= 0; i-- {
				e := cv.empties[i]
				if a.kind != placement.Forward && b.kind != placement.Forward && b.stage < e && e < a.stage {
					addDep(from, index[blockKey{e, 0, cv.kindOf(-1)}])
					from = index[blockKey{e, 0, cv.kindOf(-1)}]
				}
			}
			addDep(from, index[b])
		}
	}
	if cv.split {
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
