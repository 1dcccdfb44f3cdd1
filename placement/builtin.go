package placement

import (
	"fmt"
	"strings"

	"github.com/tessel-pp/tessel/limits"
)

// Options parameterise a built-in shape. Zero values mean the defaults of
// the paper's evaluation (§VI-A): 4 devices, forward time 1, backward time
// 3 (recompute on), one stage per device, the backward not split.
type Options struct {
	Devices      int
	ForwardTime  int
	BackwardTime int
	// Inference drops every backward block (and the dependencies that touch
	// one) and sets every memory to 0; the placement is named "<shape>-infer".
	Inference bool

	// SplitBackward turns every backward block into an input block (the
	// gradient for its inputs, InputTime, memory 0) and a weight block (the
	// gradient for its weights, WeightTime, the backward's memory) on the
	// same devices, as the zero-bubble papers do; BackwardTime is then not
	// used. Blocks on all devices (shards) split into two of time 1 and
	// memory 0. The input block takes the backward's place in the chain
	// (the previous stage's gradient needs only it); the weight block
	// depends on its input block alone. Ids: b… becomes i… and w…. The
	// placement's name gets "-split". Inference ignores it.
	SplitBackward bool
	InputTime     int // default 1 (F = I = W = 1 in the zero-bubble papers)
	WeightTime    int // default 1

	// Chunks C ≥ 2 cuts the model of a chain shape into C·D stages, C per
	// device ("virtual stages"), placed by Order; 0 or 1 means one stage
	// per device. The name gets "-<order><C>", e.g. v-shape-loop2.
	Chunks int
	Order  Order
}

// Order places the C·D stages of a chunked chain on the D devices.
type Order string

const (
	// Loop puts stage s on device s mod D (Megatron-LM's and PyTorch's
	// interleaved 1F1B).
	Loop Order = "loop"
	// V puts chunk c (stages cD..cD+D−1) down the devices 0..D−1 when c is
	// even and back up D−1..0 when c is odd: with C = 2 the V placement of
	// ZB-V and DualPipeV.
	V Order = "v"
)

// Orders lists the valid orders (a new slice each call).
func Orders() []Order { return []Order{Loop, V} }

// Defaults of Options.
const (
	DefaultDevices      = 4
	DefaultForwardTime  = 1
	DefaultBackwardTime = 3
	DefaultInputTime    = 1
	DefaultWeightTime   = 1
	// MaxChunks bounds Options.Chunks.
	MaxChunks = limits.Chunks
)

// shape is one built-in placement.
type shape struct {
	name    string
	summary string
	even    bool // needs an even D ≥ 2
	chunks  bool // may be cut into chunks: built from vChain alone
	split   bool // splits its backward whatever Options.SplitBackward says
	build   func(b *builder)
}

// shapes is the fixed, ordered table of built-ins. Block ids:
//
//   - f<s>, b<s>: forward and backward of stage s, on device s;
//   - x-shape: fd<s>/bd<s> are stage s of the chain going down (device s),
//     fu<s>/bu<s> stage s of the chain going up (device D-1-s);
//   - fs, bs (m-shape) and fs0, fs1, bs1, bs0 (nn-shape): the forward and
//     backward of a block sharded over all devices (the embedding);
//   - fx, bx (k-shape): the forward and backward of the cross block on all
//     devices where the two branches join;
//   - with a split backward, i<…> and w<…> in place of b<…>.
//
// Blocks are listed in dependency order; a shard block has time 1 and
// memory 0 whatever the forward and backward times.
var shapes = []shape{
	{"v-shape", "f0..f{D-1} on devices 0..D-1, then b{D-1}..b0 back down: one chain (1F1B)", false, true, false, func(b *builder) {
		b.chain(b.vChain("f", "b", false)...)
	}},
	{"x-shape", "two independent V chains: fd/bd down over 0..D-1 and back, fu/bu up over D-1..0 and back (Chimera)", false, true, false, func(b *builder) {
		b.chain(b.vChain("fd", "bd", false)...)
		b.chain(b.vChain("fu", "bu", true)...)
	}},
	{"dualpipe", "the x-shape with its backward split: fd/id down over 0..D-1 and back, fu/iu up over D-1..0 and back, each w after its i (DeepSeek's DualPipe)", false, false, true, func(b *builder) {
		b.chain(b.vChain("fd", "bd", false)...)
		b.chain(b.vChain("fu", "bu", true)...)
	}},
	{"m-shape", "shard forward fs on all devices, the V chain, shard backward bs on all devices: one chain (GPT)", false, true, false, func(b *builder) {
		c := []int{b.shard("fs", Forward)}
		c = append(c, b.vChain("f", "b", false)...)
		c = append(c, b.shard("bs", Backward))
		b.chain(c...)
	}},
	{"nn-shape", "fs0, f0..f{D/2-1}, fs1, f{D/2}..f{D-1}, b{D-1}..b{D/2}, bs1, b{D/2-1}..b0, bs0: one chain, fs/bs on all devices, D even (mT5)", true, false, false, func(b *builder) {
		h := b.d / 2
		c := []int{b.shard("fs0", Forward)}
		for s := range h {
			c = append(c, b.stage("f", Forward, s, s))
		}
		c = append(c, b.shard("fs1", Forward))
		for s := h; s < b.d; s++ {
			c = append(c, b.stage("f", Forward, s, s))
		}
		for s := b.d - 1; s >= h; s-- {
			c = append(c, b.stage("b", Backward, s, s))
		}
		c = append(c, b.shard("bs1", Backward))
		for s := h - 1; s >= 0; s-- {
			c = append(c, b.stage("b", Backward, s, s))
		}
		c = append(c, b.shard("bs0", Backward))
		b.chain(c...)
	}},
	{"k-shape", "branches f0..f{D/2-1} and f{D/2}..f{D-1} join into fx on all devices, then bx forks into b{D/2-1}..b0 and b{D-1}..b{D/2}; D even (Flava)", true, false, false, func(b *builder) {
		h := b.d / 2
		var left, right []int
		for s := range h {
			left = append(left, b.stage("f", Forward, s, s))
		}
		for s := h; s < b.d; s++ {
			right = append(right, b.stage("f", Forward, s, s))
		}
		fx := b.cross("fx", Forward)
		bx := b.cross("bx", Backward)
		b.chain(append(left, fx)...)
		b.chain(append(right, fx)...)
		b.chain(fx, bx)
		left, right = []int{bx}, []int{bx}
		for s := h - 1; s >= 0; s-- {
			left = append(left, b.stage("b", Backward, s, s))
		}
		for s := b.d - 1; s >= h; s-- {
			right = append(right, b.stage("b", Backward, s, s))
		}
		b.chain(left...)
		b.chain(right...)
	}},
}

// BuiltinNames lists the built-in shapes in a stable order.
func BuiltinNames() []string {
	names := make([]string, len(shapes))
	for i, s := range shapes {
		names[i] = s.name
	}
	return names
}

// BuiltinSummary describes a built-in shape in one line, or returns "" for
// an unknown name.
func BuiltinSummary(name string) string {
	for _, s := range shapes {
		if s.name == name {
			return s.summary
		}
	}
	return ""
}

// Builtin builds the named shape (see docs/design.md, "Built-in placements",
// and the Tessel paper's Fig. 8). Stage s runs on device s; a forward block has time
// ForwardTime and memory +1, a backward block time BackwardTime and memory
// −1; shard blocks (on all devices) have time 1 and memory 0 regardless of
// the overrides. k-shape's cross block is a forward and a backward on all
// devices with the forward and backward times and memory +1/−1.
//
// The zero-bubble family (docs/design.md, "Placements of the zero-bubble
// family"): Options.SplitBackward splits every backward into input and
// weight blocks, Options.Chunks and Options.Order cut the chain of v-, x-
// and m-shape into C·D stages (the loop and V placements), and "dualpipe"
// is the x-shape with its backward split (DeepSeek's DualPipe; She et al.
// §V-A).
func Builtin(name string, opt Options) (*Placement, error) {
	var sh *shape
	for i := range shapes {
		if shapes[i].name == name {
			sh = &shapes[i]
		}
	}
	if sh == nil {
		return nil, fmt.Errorf("unknown placement %q (built-in: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	opt = opt.withDefaults()
	switch {
	case sh.even && (opt.Devices < 2 || opt.Devices%2 != 0):
		return nil, fmt.Errorf("%s: devices must be even and at least 2, got %d", name, opt.Devices)
	case opt.Devices < 1 || opt.Devices > MaxDevices:
		return nil, fmt.Errorf("%s: devices must be in 1..%d, got %d", name, MaxDevices, opt.Devices)
	case opt.ForwardTime < 1 || opt.ForwardTime > MaxTime:
		return nil, fmt.Errorf("%s: forward time must be in 1..%d, got %d", name, MaxTime, opt.ForwardTime)
	case opt.BackwardTime < 1 || opt.BackwardTime > MaxTime:
		return nil, fmt.Errorf("%s: backward time must be in 1..%d, got %d", name, MaxTime, opt.BackwardTime)
	case opt.InputTime < 1 || opt.InputTime > MaxTime:
		return nil, fmt.Errorf("%s: input time must be in 1..%d, got %d", name, MaxTime, opt.InputTime)
	case opt.WeightTime < 1 || opt.WeightTime > MaxTime:
		return nil, fmt.Errorf("%s: weight time must be in 1..%d, got %d", name, MaxTime, opt.WeightTime)
	case opt.Chunks < 1 || opt.Chunks > MaxChunks:
		return nil, fmt.Errorf("%s: chunks must be in 1..%d, got %d", name, MaxChunks, opt.Chunks)
	case opt.Chunks > 1 && !sh.chunks:
		return nil, fmt.Errorf("%s: cannot be cut into chunks (only %s)", name, strings.Join(chunkable(), ", "))
	case !validOrder(opt.Order):
		return nil, fmt.Errorf("%s: unknown order %q (want %s or %s)", name, opt.Order, Loop, V)
	}
	split := (opt.SplitBackward || sh.split) && !opt.Inference // inference has no backward to split
	full := name
	if opt.Chunks > 1 {
		full += fmt.Sprintf("-%s%d", opt.Order, opt.Chunks)
	}
	b := &builder{d: opt.Devices, opt: opt, p: &Placement{Name: full, Devices: opt.Devices}, shards: map[int]bool{}}
	sh.build(b)
	p := b.p
	if split {
		p = splitBackward(p, b.shards, opt.InputTime, opt.WeightTime)
		if !sh.split {
			p.Name += "-split"
		}
	}
	if opt.Inference {
		p = inference(p)
	}
	if err := p.Validate(); err != nil { // a bug in a shape, not in the input
		return nil, fmt.Errorf("built-in %s: %w", name, err)
	}
	return p, nil
}

func (o Options) withDefaults() Options {
	if o.Devices == 0 {
		o.Devices = DefaultDevices
	}
	if o.ForwardTime == 0 {
		o.ForwardTime = DefaultForwardTime
	}
	if o.BackwardTime == 0 {
		o.BackwardTime = DefaultBackwardTime
	}
	if o.InputTime == 0 {
		o.InputTime = DefaultInputTime
	}
	if o.WeightTime == 0 {
		o.WeightTime = DefaultWeightTime
	}
	if o.Chunks == 0 {
		o.Chunks = 1
	}
	if o.Order == "" {
		o.Order = Loop
	}
	return o
}

func validOrder(o Order) bool {
	for _, x := range Orders() {
		if x == o {
			return true
		}
	}
	return false
}

// chunkable lists the shapes that take Options.Chunks.
func chunkable() []string {
	var out []string
	for _, s := range shapes {
		if s.chunks {
			out = append(out, s.name)
		}
	}
	return out
}

// splitBackward returns p with every backward block b replaced by its
// input block, at b's index, followed by its weight block: b's
// predecessors feed the input block, b's successors wait for the input
// block only, and the weight block depends on the input block alone.
// Shards (blocks on all devices, listed in shards) split into two of time
// 1 and memory 0; any other backward into input (inputTime, memory 0) and
// weight (weightTime, the backward's memory).
func splitBackward(p *Placement, shards map[int]bool, inputTime, weightTime int) *Placement {
	q := &Placement{Name: p.Name, Devices: p.Devices}
	index := make([]int, len(p.Blocks)) // old block → its (input) block in q
	var weights []Dep
	for i, b := range p.Blocks {
		index[i] = len(q.Blocks)
		if b.Kind != Backward {
			q.Blocks = append(q.Blocks, b)
			continue
		}
		in, w := b, b
		in.ID, w.ID = "i"+strings.TrimPrefix(b.ID, "b"), "w"+strings.TrimPrefix(b.ID, "b")
		in.Kind, w.Kind = Input, Weight
		in.Devices = append([]int(nil), b.Devices...)
		in.Time, in.Memory, w.Time = inputTime, 0, weightTime
		if shards[i] {
			in.Time, w.Time, w.Memory = 1, 1, 0
		}
		q.Blocks = append(q.Blocks, in, w)
		weights = append(weights, Dep{From: index[i], To: index[i] + 1})
	}
	for _, d := range p.Deps {
		q.Deps = append(q.Deps, Dep{From: index[d.From], To: index[d.To]})
	}
	q.Deps = append(q.Deps, weights...)
	return q
}

// inference keeps the forward blocks of p, with memory 0, and the
// dependencies between them.
func inference(p *Placement) *Placement {
	q := &Placement{Name: p.Name + "-infer", Devices: p.Devices}
	index := make([]int, len(p.Blocks))
	for i, b := range p.Blocks {
		index[i] = -1
		if info, _ := b.Kind.Info(); !info.Gradient {
			index[i] = len(q.Blocks)
			b.Memory = 0
			q.Blocks = append(q.Blocks, b)
		}
	}
	for _, d := range p.Deps {
		if index[d.From] >= 0 && index[d.To] >= 0 {
			q.Deps = append(q.Deps, Dep{From: index[d.From], To: index[d.To]})
		}
	}
	return q
}

// builder appends blocks and dependencies to a placement.
type builder struct {
	d      int
	opt    Options
	p      *Placement
	shards map[int]bool // blocks added by shard
}

func (b *builder) add(bl Block) int {
	b.p.Blocks = append(b.p.Blocks, bl)
	return len(b.p.Blocks) - 1
}

// stage adds <prefix><s> of kind k on one device.
func (b *builder) stage(prefix string, k Kind, s, dev int) int {
	bl := Block{ID: fmt.Sprintf("%s%d", prefix, s), Kind: k, Devices: []int{dev}, Time: b.opt.ForwardTime, Memory: 1}
	if k == Backward {
		bl.Time, bl.Memory = b.opt.BackwardTime, -1
	}
	return b.add(bl)
}

// vChain adds forward stages 0..S-1 then backward stages S-1..0, S = C·D
// stages, and returns them in chain order. Stage s is on device
// b.device(s), mirrored (D-1-device) when up.
func (b *builder) vChain(f, bw string, up bool) []int {
	dev := func(s int) int {
		if up {
			return b.d - 1 - b.device(s)
		}
		return b.device(s)
	}
	S := b.d * b.opt.Chunks
	var c []int
	for s := range S {
		c = append(c, b.stage(f, Forward, s, dev(s)))
	}
	for s := S - 1; s >= 0; s-- {
		c = append(c, b.stage(bw, Backward, s, dev(s)))
	}
	return c
}

// device is where stage s of a chain runs under Options.Order: s mod D
// (loop), or down and back up chunk by chunk (v).
func (b *builder) device(s int) int {
	r := s % b.d
	if b.opt.Order == V && (s/b.d)%2 == 1 {
		return b.d - 1 - r
	}
	return r
}

func (b *builder) all() []int {
	devs := make([]int, b.d)
	for i := range devs {
		devs[i] = i
	}
	return devs
}

// shard adds a block on all devices with time 1 and memory 0.
func (b *builder) shard(id string, k Kind) int {
	i := b.add(Block{ID: id, Kind: k, Devices: b.all(), Time: 1, Memory: 0})
	b.shards[i] = true
	return i
}

// cross adds a block on all devices timed and sized like a stage of kind k.
func (b *builder) cross(id string, k Kind) int {
	bl := Block{ID: id, Kind: k, Devices: b.all(), Time: b.opt.ForwardTime, Memory: 1}
	if k == Backward {
		bl.Time, bl.Memory = b.opt.BackwardTime, -1
	}
	return b.add(bl)
}

// chain adds the dependencies c[0] → c[1] → … → c[n-1].
func (b *builder) chain(c ...int) {
	for n := 1; n < len(c); n++ {
		b.p.Deps = append(b.p.Deps, Dep{From: c[n-1], To: c[n]})
	}
}
