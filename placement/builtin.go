package placement

import (
	"fmt"
	"strings"
)

// Options parameterise a built-in shape. Zero values mean the defaults of
// the paper's evaluation (§VI-A): 4 devices, forward time 1, backward time
// 3 (recompute on).
type Options struct {
	Devices      int
	ForwardTime  int
	BackwardTime int
	// Inference drops every backward block (and the dependencies that touch
	// one) and sets every memory to 0; the placement is named "<shape>-infer".
	Inference bool
}

// Defaults of Options.
const (
	DefaultDevices      = 4
	DefaultForwardTime  = 1
	DefaultBackwardTime = 3
)

// shape is one built-in placement.
type shape struct {
	name    string
	summary string
	even    bool // needs an even D ≥ 2
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
//     devices where the two branches join.
//
// Blocks are listed in dependency order; a shard block has time 1 and
// memory 0 whatever the forward and backward times.
var shapes = []shape{
	{"v-shape", "f0..f{D-1} on devices 0..D-1, then b{D-1}..b0 back down: one chain (1F1B)", false, func(b *builder) {
		b.chain(b.vChain("f", "b", false)...)
	}},
	{"x-shape", "two independent V chains: fd/bd down over 0..D-1 and back, fu/bu up over D-1..0 and back (Chimera)", false, func(b *builder) {
		b.chain(b.vChain("fd", "bd", false)...)
		b.chain(b.vChain("fu", "bu", true)...)
	}},
	{"m-shape", "shard forward fs on all devices, the V chain, shard backward bs on all devices: one chain (GPT)", false, func(b *builder) {
		c := []int{b.shard("fs", Forward)}
		c = append(c, b.vChain("f", "b", false)...)
		c = append(c, b.shard("bs", Backward))
		b.chain(c...)
	}},
	{"nn-shape", "fs0, f0..f{D/2-1}, fs1, f{D/2}..f{D-1}, b{D-1}..b{D/2}, bs1, b{D/2-1}..b0, bs0: one chain, fs/bs on all devices, D even (mT5)", true, func(b *builder) {
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
	{"k-shape", "branches f0..f{D/2-1} and f{D/2}..f{D-1} join into fx on all devices, then bx forks into b{D/2-1}..b0 and b{D-1}..b{D/2}; D even (Flava)", true, func(b *builder) {
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

// Builtin builds the named shape (see the design notes' table and the
// paper's Fig. 8). Stage s runs on device s; a forward block has time
// ForwardTime and memory +1, a backward block time BackwardTime and memory
// −1; shard blocks (on all devices) have time 1 and memory 0 regardless of
// the overrides. k-shape's cross block is a forward and a backward on all
// devices with the forward and backward times and memory +1/−1.
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
	}
	b := &builder{d: opt.Devices, opt: opt, p: &Placement{Name: name, Devices: opt.Devices}}
	sh.build(b)
	p := b.p
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
	return o
}

// inference keeps the forward blocks of p, with memory 0, and the
// dependencies between them.
func inference(p *Placement) *Placement {
	q := &Placement{Name: p.Name + "-infer", Devices: p.Devices}
	index := make([]int, len(p.Blocks))
	for i, b := range p.Blocks {
		index[i] = -1
		if b.Kind == Forward {
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
	d   int
	opt Options
	p   *Placement
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

// vChain adds forward stages 0..D-1 then backward stages D-1..0 and returns
// them in chain order; stage s is on device s, or D-1-s when up.
func (b *builder) vChain(f, bw string, up bool) []int {
	dev := func(s int) int {
		if up {
			return b.d - 1 - s
		}
		return s
	}
	var c []int
	for s := range b.d {
		c = append(c, b.stage(f, Forward, s, dev(s)))
	}
	for s := b.d - 1; s >= 0; s-- {
		c = append(c, b.stage(bw, Backward, s, dev(s)))
	}
	return c
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
	return b.add(Block{ID: id, Kind: k, Devices: b.all(), Time: 1, Memory: 0})
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
