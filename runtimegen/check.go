package runtimegen

import (
	"fmt"
	"slices"
)

// Check validates a set of programs, one per device, without running them:
// they agree on the placement, mode, micro-batches, groups and blocks;
// every instance runs exactly once on each of its devices, as a compute on
// a single device or a collective on a group; every transfer has one send
// and one receive, at the two ends its tensor's dependency joins, on a
// device that holds the tensor (it ran the producer or received the tensor
// before); in a blocking program there is no wait, in a non-blocking one
// every send and receive is waited for exactly once, after it is posted;
// every instance has each input before it runs (it ran the producer
// on this device, or completed the receive); and every offload, reload
// and recompute follows the rules of memState. Whether the programs can
// deadlock is Simulate's question.
func Check(progs []*Program) error {
	if err := checkHeaders(progs); err != nil {
		return err
	}
	p0 := progs[0]
	g, err := newGraph(p0)
	if err != nil {
		return err
	}
	c := &checker{g: g, p0: p0, sends: map[int]end{}, recvs: map[int]end{}}
	for d, p := range progs {
		dc := &deviceCheck{checker: c, d: d, ran: map[instRef]bool{}, has: map[string]bool{},
			posted: map[int]OpKind{}, waited: map[int]bool{}, done: map[string]bool{}, mem: newMemState(g, p0)}
		for k, o := range p.Ops {
			if err := dc.op(k, o); err != nil {
				return err
			}
		}
		if err := dc.finish(); err != nil {
			return err
		}
	}
	return c.ends()
}

// checkHeaders: one program per device, all of one placement, mode,
// micro-batches, groups and blocks, of a known mode.
func checkHeaders(progs []*Program) error {
	if len(progs) == 0 {
		return fmt.Errorf("no programs")
	}
	p0 := progs[0]
	if len(progs) != p0.Devices {
		return fmt.Errorf("%d programs for %d devices", len(progs), p0.Devices)
	}
	for d, p := range progs {
		if p.Device != d {
			return fmt.Errorf("program %d is for device %d", d, p.Device)
		}
		if p.Placement != p0.Placement || p.Devices != p0.Devices || p.Mode != p0.Mode || p.MicroBatches != p0.MicroBatches {
			return fmt.Errorf("device %d: program header (%q, %d devices, %s, %d micro-batches) differs from device 0's (%q, %d devices, %s, %d micro-batches)",
				d, p.Placement, p.Devices, p.Mode, p.MicroBatches, p0.Placement, p0.Devices, p0.Mode, p0.MicroBatches)
		}
		if !slices.EqualFunc(p.Groups, p0.Groups, slices.Equal) {
			return fmt.Errorf("device %d: groups %v differ from device 0's %v", d, p.Groups, p0.Groups)
		}
		if !slices.EqualFunc(p.Blocks, p0.Blocks, blockInfoEqual) {
			return fmt.Errorf("device %d: blocks differ from device 0's", d)
		}
	}
	if !slices.Contains(Modes(), p0.Mode) {
		return fmt.Errorf("unknown mode %q", p0.Mode)
	}
	return nil
}

// end is one end of a transfer: the device, the op's index and the op.
type end struct {
	dev, op int
	o       Op
}

// checker is Check's state across devices: every send and receive by tag.
type checker struct {
	g            *graph
	p0           *Program
	sends, recvs map[int]end
}

// deviceCheck is Check's state on one device.
type deviceCheck struct {
	*checker
	d      int
	ran    map[instRef]bool // instances run here
	has    map[string]bool  // tensors this device can send or use
	posted map[int]OpKind   // transfer tags posted here, not yet waited for
	waited map[int]bool     // tags waited for
	done   map[string]bool  // received tensors usable here
	mem    *memState
}

// op checks the device's k-th op.
func (dc *deviceCheck) op(k int, o Op) error {
	where := func() string { return fmt.Sprintf("device %d, op %d (%s)", dc.d, k, o) }
	b, ok := dc.g.index[o.Block]
	if !ok {
		return fmt.Errorf("%s: unknown block %q", where(), o.Block)
	}
	if o.Micro < 0 || o.Micro >= dc.p0.MicroBatches {
		return fmt.Errorf("%s: micro-batch %d out of range 0..%d", where(), o.Micro, dc.p0.MicroBatches-1)
	}
	switch o.Kind {
	case Compute, Collective:
		return dc.compute(b, o, where)
	case Offload, Reload, Recompute:
		if err := dc.mem.op(dc.d, b, o, dc.ran); err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		return nil
	case Send, Recv:
		return dc.transfer(k, o, where)
	case Wait:
		return dc.wait(o, where)
	}
	return fmt.Errorf("%s: unknown op %q", where(), o.Kind)
}

// compute checks that block b of o's micro-batch runs here once, as the
// right kind of op, with its inputs at hand.
func (dc *deviceCheck) compute(b int, o Op, where func() string) error {
	p0, d := dc.p0, dc.d
	info := p0.Blocks[b]
	if !slices.Contains(info.Devices, d) {
		return fmt.Errorf("%s: block %q does not run on device %d", where(), o.Block, d)
	}
	if want := kindOf(info); o.Kind != want {
		return fmt.Errorf("%s: block %q on devices %v is a %s", where(), o.Block, info.Devices, want)
	}
	r := instRef{b, o.Micro}
	if dc.ran[r] {
		return fmt.Errorf("%s: %s@%d runs twice", where(), o.Block, o.Micro)
	}
	if err := dc.mem.gradient(info, o.Micro); err != nil {
		return fmt.Errorf("%s: %w", where(), err)
	}
	for _, in := range info.Inputs {
		from := dc.g.index[in.Block]
		name := TensorName(in.Block, info.ID, o.Micro)
		if slices.Contains(p0.Blocks[from].Devices, d) {
			if !dc.ran[instRef{from, o.Micro}] {
				return fmt.Errorf("%s: runs before its input %s@%d", where(), in.Block, o.Micro)
			}
		} else if !dc.done[name] {
			return fmt.Errorf("%s: input %s has not been received", where(), name)
		}
	}
	dc.ran[r] = true
	for _, out := range info.Outputs {
		dc.has[TensorName(info.ID, out.Block, o.Micro)] = true
	}
	return nil
}

// transfer checks a send or receive, the k-th op: a dependency's tensor,
// between the devices it joins, its tag used once each way.
func (dc *deviceCheck) transfer(k int, o Op, where func() string) error {
	p0, d := dc.p0, dc.d
	from, to, m, err := SplitTensorName(o.Tensor)
	fi, okf := dc.g.index[from]
	ti, okt := dc.g.index[to]
	if err != nil || !okf || !okt || !dc.g.dep[[2]int{fi, ti}] || m != o.Micro {
		return fmt.Errorf("%s: tensor %q is no dependency of micro-batch %d", where(), o.Tensor, o.Micro)
	}
	if o.Peer < 0 || o.Peer >= p0.Devices || o.Peer == d {
		return fmt.Errorf("%s: peer %d is not another device", where(), o.Peer)
	}
	if o.Kind == Send {
		if o.Block != from || !dc.has[o.Tensor] {
			return fmt.Errorf("%s: sends a tensor this device does not hold", where())
		}
		if !slices.Contains(p0.Blocks[ti].Devices, o.Peer) {
			return fmt.Errorf("%s: block %q does not run on device %d", where(), to, o.Peer)
		}
		if e, dup := dc.sends[o.Tag]; dup {
			return fmt.Errorf("%s: tag %d already sent by device %d, op %d", where(), o.Tag, e.dev, e.op)
		}
		dc.sends[o.Tag] = end{d, k, o}
	} else {
		if o.Block != to || !slices.Contains(p0.Blocks[ti].Devices, d) {
			return fmt.Errorf("%s: block %q does not run on device %d", where(), to, d)
		}
		if slices.Contains(p0.Blocks[fi].Devices, d) {
			return fmt.Errorf("%s: receives a tensor produced on this device", where())
		}
		if e, dup := dc.recvs[o.Tag]; dup {
			return fmt.Errorf("%s: tag %d already received by device %d, op %d", where(), o.Tag, e.dev, e.op)
		}
		dc.recvs[o.Tag] = end{d, k, o}
	}
	if p0.Mode == NonBlocking {
		dc.posted[o.Tag] = o.Kind
	} else if o.Kind == Recv {
		dc.done[o.Tensor] = true
		dc.has[o.Tensor] = true
	}
	return nil
}

// wait checks a wait: non-blocking programs only, for a transfer posted
// here and not waited for yet, naming it as it was posted.
func (dc *deviceCheck) wait(o Op, where func() string) error {
	if dc.p0.Mode == Blocking {
		return fmt.Errorf("%s: a blocking program has no waits", where())
	}
	kind, ok := dc.posted[o.Tag]
	if !ok {
		if dc.waited[o.Tag] {
			return fmt.Errorf("%s: tag %d waited for twice", where(), o.Tag)
		}
		return fmt.Errorf("%s: tag %d is not posted on this device before", where(), o.Tag)
	}
	e := dc.sends[o.Tag]
	if kind == Recv {
		e = dc.recvs[o.Tag]
	}
	if e.o.Tensor != o.Tensor || e.o.Peer != o.Peer || e.o.Block != o.Block {
		return fmt.Errorf("%s: does not match op %d (%s)", where(), e.op, e.o)
	}
	delete(dc.posted, o.Tag)
	dc.waited[o.Tag] = true
	if kind == Recv {
		dc.done[o.Tensor] = true
		dc.has[o.Tensor] = true
	}
	return nil
}

// finish checks the device's end: every instance of its blocks ran, its
// memory is back, and every transfer it posted was waited for.
func (dc *deviceCheck) finish() error {
	p0, d := dc.p0, dc.d
	for b, info := range p0.Blocks {
		if !slices.Contains(info.Devices, d) {
			continue
		}
		for m := range p0.MicroBatches {
			if !dc.ran[instRef{b, m}] {
				return fmt.Errorf("device %d: %s@%d never runs", d, info.ID, m)
			}
		}
	}
	if err := dc.mem.finish(d); err != nil {
		return err
	}
	if len(dc.posted) > 0 {
		tags := make([]int, 0, len(dc.posted))
		for t := range dc.posted {
			tags = append(tags, t)
		}
		slices.Sort(tags)
		return fmt.Errorf("device %d: transfer %d is posted but never waited for", d, tags[0])
	}
	return nil
}

// ends checks that every tag has one send and one receive, the two ends
// of one transfer.
func (c *checker) ends() error {
	for tag, s := range c.sends {
		r, ok := c.recvs[tag]
		if !ok {
			return fmt.Errorf("device %d, op %d (%s): no device receives it", s.dev, s.op, s.o)
		}
		if r.dev != s.o.Peer || s.dev != r.o.Peer || r.o.Tensor != s.o.Tensor {
			return fmt.Errorf("device %d, op %d (%s) and device %d, op %d (%s) share tag %d but are not the two ends of one transfer",
				s.dev, s.op, s.o, r.dev, r.op, r.o, tag)
		}
	}
	for tag, r := range c.recvs {
		if _, ok := c.sends[tag]; !ok {
			return fmt.Errorf("device %d, op %d (%s): no device sends it", r.dev, r.op, r.o)
		}
	}
	return nil
}

// instRef is an instance by block index and micro-batch.
type instRef struct{ block, micro int }

// graph indexes a program's blocks.
type graph struct {
	index map[string]int
	dep   map[[2]int]bool
}

func newGraph(p *Program) (*graph, error) {
	g := &graph{index: map[string]int{}, dep: map[[2]int]bool{}}
	for i, b := range p.Blocks {
		if _, dup := g.index[b.ID]; dup {
			return nil, fmt.Errorf("block %q listed twice", b.ID)
		}
		if len(b.Devices) == 0 || b.Time < 1 {
			return nil, fmt.Errorf("block %q: needs devices and a time of at least 1", b.ID)
		}
		for _, d := range b.Devices {
			if d < 0 || d >= p.Devices {
				return nil, fmt.Errorf("block %q: device %d out of range 0..%d", b.ID, d, p.Devices-1)
			}
		}
		g.index[b.ID] = i
	}
	for i, b := range p.Blocks {
		for _, in := range b.Inputs {
			j, ok := g.index[in.Block]
			if !ok {
				return nil, fmt.Errorf("block %q: input from unknown block %q", b.ID, in.Block)
			}
			g.dep[[2]int{j, i}] = true
		}
	}
	return g, nil
}

func kindOf(b BlockInfo) OpKind {
	if len(b.Devices) > 1 {
		return Collective
	}
	return Compute
}

func blockInfoEqual(a, b BlockInfo) bool {
	return a.ID == b.ID && a.Kind == b.Kind && slices.Equal(a.Devices, b.Devices) && a.Time == b.Time &&
		a.Forward == b.Forward && slices.Equal(a.Inputs, b.Inputs) && slices.Equal(a.Outputs, b.Outputs)
}

// memState follows one device's offloads, reloads and recomputes: each
// names a forward block that runs on this device alone, after the
// instance ran and before any of its gradient blocks; an instance is
// offloaded at most once and then reloaded once before its first gradient
// block, or recomputed once before it, never both; and only an instance
// with a gradient block on this device is offloaded or recomputed.
type memState struct {
	g      *graph
	p      *Program
	state  map[instRef]OpKind // the last memory op of an instance
	grads  map[string]bool    // forward ids with a gradient block
	gradOf map[instRef]bool   // instances whose first gradient block ran
}

func newMemState(g *graph, p *Program) *memState {
	m := &memState{g: g, p: p, state: map[instRef]OpKind{}, grads: map[string]bool{}, gradOf: map[instRef]bool{}}
	for _, b := range p.Blocks {
		if b.Forward != "" && kindInfo(b.Kind).Gradient {
			m.grads[b.Forward] = true
		}
	}
	return m
}

func (m *memState) op(d, b int, o Op, ran map[instRef]bool) error {
	info := m.p.Blocks[b]
	if info.Kind != "forward" {
		return fmt.Errorf("%s names %s block %q, not a forward block", o.Kind, info.Kind, info.ID)
	}
	if !slices.Equal(info.Devices, []int{d}) {
		return fmt.Errorf("%s: block %q runs on devices %v, not on device %d alone", o.Kind, info.ID, info.Devices, d)
	}
	if !m.grads[info.ID] {
		return fmt.Errorf("%s: block %q has no gradient block", o.Kind, info.ID)
	}
	r := instRef{b, o.Micro}
	if !ran[r] {
		return fmt.Errorf("%s@%d has not run", info.ID, o.Micro)
	}
	if m.gradOf[r] {
		return fmt.Errorf("%s@%d after its gradient block", info.ID, o.Micro)
	}
	prev, seen := m.state[r]
	switch {
	case o.Kind == Reload && prev != Offload:
		return fmt.Errorf("reloads %s@%d, which is not offloaded", info.ID, o.Micro)
	case o.Kind != Reload && seen:
		return fmt.Errorf("%s@%d was already %s", info.ID, o.Micro, past(prev))
	}
	m.state[r] = o.Kind
	return nil
}

// gradient checks a gradient block of forward f@micro about to run.
func (m *memState) gradient(info BlockInfo, micro int) error {
	if info.Forward == "" || !kindInfo(info.Kind).Gradient {
		return nil
	}
	r := instRef{m.g.index[info.Forward], micro}
	if m.state[r] == Offload {
		return fmt.Errorf("%s@%d runs while %s@%d is offloaded (no reload before it)", info.ID, micro, info.Forward, micro)
	}
	m.gradOf[r] = true
	return nil
}

func (m *memState) finish(d int) error {
	for r, k := range m.state {
		if k == Offload {
			return fmt.Errorf("device %d: %s@%d is offloaded and never reloaded", d, m.p.Blocks[r.block].ID, r.micro)
		}
	}
	return nil
}

func past(k OpKind) string {
	switch k {
	case Offload:
		return "offloaded"
	case Reload:
		return "offloaded and reloaded"
	}
	return "recomputed"
}
