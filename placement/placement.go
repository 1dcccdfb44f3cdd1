// Package placement describes what one micro-batch computes and where: its
// blocks, each pinned to one device or to a group of devices, with time and
// memory, and the data dependencies between them (the paper's Fig. 1 and
// Table I). It validates placements, reads and writes the JSON placement
// file, and builds the paper's shapes (v, x, m, nn, k) and the zero-bubble
// family's: any of them with its backward split into input and weight
// blocks, chunked chains (the loop and V placements) and DualPipe's.
//
// A placement says nothing about time across micro-batches: that is a
// schedule (package schedule).
//
// # One rule for dependency timing
//
// A dependency d = B_i → B_j means start(B_j^n) ≥ end(B_i^n) + c_ij for
// every micro-batch n, c_ij being the time the tensor takes from B_i's
// devices to B_j's (Transfer: 0 on a shared device, and 0 everywhere until
// a cluster sets Transfers). Delay is that rule as one number, the least
// time from the start of B_i^n to the start of B_j^n. The verifier,
// compaction, the bounds, every encoder and completion ask Delay rather
// than adding block times themselves, so that a new term of the rule (a
// transfer time, a device speed) is written here once.
package placement

import (
	"container/heap"
	"maps"

	"github.com/tessel-pp/tessel/quantity"
)

// Kind is what a block computes. The set is closed: the loader rejects any
// other value.
type Kind string

const (
	Forward  Kind = "forward"
	Backward Kind = "backward" // the whole backward: gradients for inputs and weights
	Input    Kind = "input"    // the gradient for the block's inputs only ("B" of zero bubble, "I" of PyTorch)
	Weight   Kind = "weight"   // the gradient for its weights only ("W")
)

// Kinds lists every valid Kind, in a stable order (a new slice each
// call).
func Kinds() []Kind { return []Kind{Forward, Backward, Input, Weight} }

// KindInfo is everything the library needs to know about a kind: every
// package asks this table instead of switching on kinds.
type KindInfo struct {
	Kind Kind
	// Letter is the kind's letter in renderings (f, b, i, w); its upper
	// case is PyTorch's action type (F, B, I, W).
	Letter byte
	// Gradient is true for the kinds of the backward pass.
	Gradient bool
	// InputGradient is true for the kinds that compute the gradient the
	// previous stage waits for (backward and input).
	InputGradient bool
	// WeightGradient is true for the kinds that compute the weights'
	// gradient (backward and weight).
	WeightGradient bool
}

var kindInfos = []KindInfo{
	{Kind: Forward, Letter: 'f'},
	{Kind: Backward, Letter: 'b', Gradient: true, InputGradient: true, WeightGradient: true},
	{Kind: Input, Letter: 'i', Gradient: true, InputGradient: true},
	{Kind: Weight, Letter: 'w', Gradient: true, WeightGradient: true},
}

// Info returns the properties of k; ok is false for a kind outside Kinds.
func (k Kind) Info() (info KindInfo, ok bool) {
	for _, in := range kindInfos {
		if in.Kind == k {
			return in, true
		}
	}
	return KindInfo{Kind: k}, false
}

// Block is B_i: one block of one micro-batch.
type Block struct {
	ID      string `json:"id"`
	Kind    Kind   `json:"kind"`
	Devices []int  `json:"devices"` // one device, or a tensor-parallel group; sorted, distinct
	// Candidates, when set, are the device groups the search chooses
	// Devices from (each sorted, distinct; docs/placement-search.md):
	// Devices is nil until a choice is made (Choose), and then one of
	// Candidates, which stay to say where the choice came from. File:
	// "candidates" instead of "devices", and "chosen" for the choice.
	Candidates [][]int `json:"candidates,omitempty"`
	Time       int     `json:"time"`   // ≥ 1
	Memory     int     `json:"memory"` // negative frees

	// The activation of a forward block (see "Memory as a decision" in
	// memory.go). Offload > 0: instances may be offloaded to host memory,
	// each move (offload, reload) taking Offload. Activation > 0: the
	// size of the activation, which a cluster's host link turns into
	// Offload. Recompute: instances may be recomputed, keeping Checkpoint
	// of the block's memory. All zero: the block's activation stays on
	// its devices, as before. File: "offload", "activation", "recompute",
	// "checkpoint", each optional and written only when set.
	Offload    int     `json:"offload,omitempty"`
	Activation float64 `json:"activation,omitempty"`
	Recompute  bool    `json:"recompute,omitempty"`
	Checkpoint int     `json:"checkpoint,omitempty"`

	// RecomputedLayers, on a forward block, is how many of its layers
	// every micro-batch recomputes under a per-stage policy (package
	// recompute): the block's Memory is already what it keeps, and its
	// gradient block's Time already holds the second run. The schedule
	// takes no decision about it; exports turn it into a framework's
	// setting. File: "recomputed_layers", optional.
	RecomputedLayers int `json:"recomputed_layers,omitempty"`
}

// Dep is a data dependency B_From → B_To between block indices of the same
// micro-batch.
type Dep struct {
	From, To int
}

// Placement is the blocks of one micro-batch on D devices. Blocks are
// addressed by index (0..K-1) everywhere in the library; IDs are for people
// and files.
type Placement struct {
	Name    string
	Devices int
	Blocks  []Block
	Deps    []Dep
	// Sizes is the size of the tensor each dependency carries (the
	// placement file's ["a", "b", size]), which a cluster turns into a
	// transfer time. A dependency missing from it carries size 1.
	Sizes map[Dep]float64
	// Overlap, when set, lets a schedule run a forward and a whole
	// backward of two micro-batches as one overlapped action (overlap.go);
	// nil overlaps nothing. File: "overlap", written only when set.
	Overlap *Overlap
	// Units, when set, says what the placement's integers are for a
	// person: one time step in the model's time unit, one memory unit in
	// bytes, and the steps of one step of the search's coarse copy
	// (docs/formats.md, "Units"). It changes no rule: times and memories
	// stay integers. nil (every built-in): steps and units. File:
	// "units", written only when set.
	Units *quantity.Scale
	// Timing is what a cluster sets (timing.go): the placement as timed.
	// Zero in a placement read from a file, the placement as written.
	Timing
}

// Size is the size of the tensor dependency d carries: 1 unless Sizes
// says otherwise.
func (p *Placement) Size(d Dep) float64 {
	if z, ok := p.Sizes[d]; ok {
		return z
	}
	return 1
}

// Budget is the memory budget of device d under the one budget memory of
// a search (0: unlimited): the least of memory and the device's capacity
// among those that are set (positive), and 0 (unlimited) when neither is.
// It is the one rule for a device's budget: the verifier, the bounds, the
// constructions, the baselines and every encoder ask it.
func (p *Placement) Budget(d, memory int) int {
	c := 0
	if d >= 0 && d < len(p.Capacities) {
		c = p.Capacities[d]
	}
	switch {
	case c <= 0:
		return max(memory, 0)
	case memory <= 0:
		return c
	}
	return min(c, memory)
}

// Budgets is Budget of every device.
func (p *Placement) Budgets(memory int) []int {
	out := make([]int, p.Devices)
	for d := range out {
		out[d] = p.Budget(d, memory)
	}
	return out
}

// Limited reports whether some device has a budget under memory.
func (p *Placement) Limited(memory int) bool {
	if memory > 0 {
		return true
	}
	for _, c := range p.Capacities {
		if c > 0 {
			return true
		}
	}
	return false
}

// Uniform reports whether every device has the same budget under memory
// (always so without capacities).
func (p *Placement) Uniform(memory int) bool {
	for d := range p.Devices {
		if p.Budget(d, memory) != p.Budget(0, memory) {
			return false
		}
	}
	return true
}

// K is the number of blocks of one micro-batch.
func (p *Placement) K() int { return len(p.Blocks) }

// Index returns the index of the block with the given id, or -1.
func (p *Placement) Index(id string) int {
	for i, b := range p.Blocks {
		if b.ID == id {
			return i
		}
	}
	return -1
}

// Preds returns, for every block, the indices of the blocks it depends on,
// in the order of Deps.
func (p *Placement) Preds() [][]int {
	preds := make([][]int, len(p.Blocks))
	for _, d := range p.Deps {
		preds[d.To] = append(preds[d.To], d.From)
	}
	return preds
}

// Succs returns, for every block, the indices of the blocks that depend on
// it, in the order of Deps.
func (p *Placement) Succs() [][]int {
	succs := make([][]int, len(p.Blocks))
	for _, d := range p.Deps {
		succs[d.From] = append(succs[d.From], d.To)
	}
	return succs
}

// PredDeps returns, for every block, the dependencies into it, in the order
// of Deps: Preds with the Dep kept, so that callers ask Delay without a
// second look-up.
func (p *Placement) PredDeps() [][]Dep {
	in := make([][]Dep, len(p.Blocks))
	for _, d := range p.Deps {
		in[d.To] = append(in[d.To], d)
	}
	return in
}

// SuccDeps returns, for every block, the dependencies out of it, in the
// order of Deps.
func (p *Placement) SuccDeps() [][]Dep {
	out := make([][]Dep, len(p.Blocks))
	for _, d := range p.Deps {
		out[d.From] = append(out[d.From], d)
	}
	return out
}

// Transfer is c_ij, the time the tensor of dependency d takes from B_i's
// devices to B_j's: 0 on the same device, and 0 everywhere until a cluster
// says otherwise (Transfers).
func (p *Placement) Transfer(d Dep) int {
	if p.Transfers == nil || p.Shares(d.From, d.To) {
		return 0
	}
	return p.Transfers[d]
}

// Link is one direction of the connection between two devices: the
// channel a transfer from device From to device To occupies (where the
// pair has several links, Lanes, all of them).
type Link struct {
	From, To int
}

// Links is the links dependency d's tensor crosses: from the first device
// of B_i's group to every device of B_j's group outside B_i's (a device of
// the producer's group already holds the tensor), in B_j's device order.
// None when the groups share a device or the transfer takes no time: such
// a tensor occupies no link. The runtime's sends follow the same rule.
func (p *Placement) Links(d Dep) []Link {
	if p.Transfer(d) == 0 {
		return nil
	}
	from := p.Blocks[d.From].Devices[0]
	var out []Link
	for _, to := range p.Blocks[d.To].Devices {
		out = append(out, Link{from, to})
	}
	return out
}

// Delay is the least time from the start of B_i^n to the start of B_j^n
// for dependency d = B_i → B_j: t_i + c_ij. It is the one rule for when a
// block may start after another (see the package doc).
func (p *Placement) Delay(d Dep) int {
	return p.Blocks[d.From].Time + p.Transfer(d)
}

// Topo returns the block indices in a topological order that is stable:
// among ready blocks, the lowest index first. ok is false when the
// dependencies have a cycle.
func (p *Placement) Topo() (order []int, ok bool) {
	indeg := make([]int, len(p.Blocks))
	for _, d := range p.Deps {
		indeg[d.To]++
	}
	succs := p.Succs()
	// The ready blocks in a min-heap: the same order as picking the lowest
	// ready index each time, in O(K log K) rather than O(K²).
	var ready intHeap
	for i, n := range indeg {
		if n == 0 {
			ready = append(ready, i)
		}
	}
	heap.Init(&ready)
	order = make([]int, 0, len(p.Blocks))
	for ready.Len() > 0 {
		next := heap.Pop(&ready).(int)
		order = append(order, next)
		for _, s := range succs[next] {
			if indeg[s]--; indeg[s] == 0 {
				heap.Push(&ready, s)
			}
		}
	}
	return order, len(order) == len(p.Blocks)
}

// intHeap is a min-heap of ints (container/heap).
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// OnDevice reports whether block i occupies device d.
func (p *Placement) OnDevice(i, d int) bool {
	for _, x := range p.Blocks[i].Devices {
		if x == d {
			return true
		}
	}
	return false
}

// DeviceBlocks returns, for every device, the indices of the blocks that
// occupy it, in index order.
func (p *Placement) DeviceBlocks() [][]int {
	out := make([][]int, p.Devices)
	for i, b := range p.Blocks {
		for _, d := range b.Devices {
			out[d] = append(out[d], i)
		}
	}
	return out
}

// Shares reports whether blocks i and j occupy at least one common device.
func (p *Placement) Shares(i, j int) bool {
	for _, d := range p.Blocks[i].Devices {
		if p.OnDevice(j, d) {
			return true
		}
	}
	return false
}

// Loads returns load_d, the busy time of every device in one micro-batch.
func (p *Placement) Loads() []int {
	loads := make([]int, p.Devices)
	for _, b := range p.Blocks {
		for _, d := range b.Devices {
			loads[d] += b.Time
		}
	}
	return loads
}

// MaxLoad is max_d load_d, the lower bound of the repetend period.
func (p *Placement) MaxLoad() int {
	m := 0
	for _, l := range p.Loads() {
		m = max(m, l)
	}
	return m
}

// Heads returns, for every block, the length of the longest dependency
// path that must run before it starts (its earliest start in one
// micro-batch), transfers included. The placement must be acyclic.
func (p *Placement) Heads() []int {
	order, _ := p.Topo()
	preds := p.PredDeps()
	head := make([]int, len(p.Blocks))
	for _, i := range order {
		for _, d := range preds[i] {
			head[i] = max(head[i], head[d.From]+p.Delay(d))
		}
	}
	return head
}

// Tails returns, for every block, the length of the longest dependency path
// that must run after it ends, transfers included. The placement must be
// acyclic.
func (p *Placement) Tails() []int {
	order, _ := p.Topo()
	succs := p.SuccDeps()
	tail := make([]int, len(p.Blocks))
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		for _, d := range succs[i] {
			// From B_i's start, B_j starts Delay later and the path
			// ends t_j + tail_j after that; B_i's own time is not tail.
			j := d.To
			tail[i] = max(tail[i], p.Delay(d)+p.Blocks[j].Time+tail[j]-p.Blocks[i].Time)
		}
	}
	return tail
}

// CriticalPath is the makespan of one micro-batch alone with unlimited
// devices: the longest path through the dependencies.
func (p *Placement) CriticalPath() int {
	head := p.Heads()
	cp := 0
	for i, b := range p.Blocks {
		cp = max(cp, head[i]+b.Time)
	}
	return cp
}

// Bare returns a placement named name without blocks on p's devices as
// a cluster timed them: the part of p's Timing that belongs to the
// devices (each one's capacity, links that carry one transfer at a time,
// the host channels), which holds whatever blocks run there. What a
// cluster sets per block or dependency (Transfers, Lanes, Costs) is the
// new blocks' own. Clone and the placements made of another's blocks
// (coarsened, backwards merged) start from it, so that the list of those
// fields is written once.
func (p *Placement) Bare(name string) *Placement {
	return &Placement{Name: name, Devices: p.Devices, Timing: p.Timing.onDevices()}
}

// Clone returns a deep copy.
func (p *Placement) Clone() *Placement {
	q := &Placement{Name: p.Name, Devices: p.Devices, Timing: p.Timing.clone()}
	q.Deps, q.Sizes = append([]Dep(nil), p.Deps...), maps.Clone(p.Sizes)
	q.Overlap, q.Units = p.Overlap.clone(), p.Units.Clone()
	q.Blocks = make([]Block, len(p.Blocks))
	for i, b := range p.Blocks {
		b.Devices = append([]int(nil), b.Devices...)
		b.Candidates = cloneGroups(b.Candidates)
		q.Blocks[i] = b
	}
	return q
}
