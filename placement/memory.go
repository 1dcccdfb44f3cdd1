package placement

import (
	"fmt"
	"slices"
)

// # Memory as a decision: offload and recompute
//
// A forward block's activation stays on its devices from the forward's
// start until the blocks that free it run — unless the schedule decides
// otherwise for one instance (Qi et al.'s OptPipe, "Memory as a decision",
// §3 and Appendix C, eqs 10–19; Chen et al.'s activation checkpointing):
//
//   - Offload: the activation goes to host memory after the forward ends
//     and comes back before its Consumer starts. Each move (the offload,
//     then the reload) takes OffloadTime on the host channel of every
//     device of the block (HostChannel): a channel carries one move at a
//     time, and devices that share a PCIe switch share one channel. The
//     activation's memory (the forward's Memory) leaves the device when
//     the offload ends and comes back when the reload starts.
//   - Recompute: the activation, all but the checkpoint the block keeps
//     (Checkpoint), is freed when the forward ends, and the forward runs
//     a second time on its devices, for its time, before its Consumer
//     starts; that second run takes the freed memory again at its start.
//
// The rules below are the one place that says so: the verifier, the
// bounds, compaction, every construction and every encoder ask them.

// Action is what a schedule does with the activation of one forward
// instance.
type Action string

const (
	// Keep: the activation stays on the device (the default; a schedule
	// never lists it).
	Keep Action = "keep"
	// Offload: moved to host memory and reloaded before its consumer.
	Offload Action = "offload"
	// Recompute: freed at the forward's end and computed again before
	// its consumer.
	Recompute Action = "recompute"
)

// Actions lists every Action, in a stable order (a new slice each call).
func Actions() []Action { return []Action{Keep, Offload, Recompute} }

// Memory phases order the changes of a device's memory that happen at the
// same time: a decision's frees (an offload's end, a recomputed forward's
// end) first, then block starts (each adding its Memory, in the order the
// verifier walks them: block index, then micro-batch), then a decision's
// returns (a reload's start, a recompute's start). Whatever the order, the
// running sum after each change must stay within the device's budget.
const (
	PhaseFree   = 0
	PhaseBlock  = 1
	PhaseReturn = 2
)

// Consumers returns, for every block, the block before whose start an
// offloaded activation of that block must be reloaded and a recomputed one
// computed again: for a forward block, the block that computes the
// gradient of its inputs (its backward, or its input block when the
// backward is split: the pairing of Pairs), or, when no block does, the
// block that computes its weights' gradient; -1 for other blocks and for
// forward blocks no block differentiates (their activation can be neither
// offloaded nor recomputed). Every block that uses the activation after
// the consumer (a split backward's weight block) depends on it on the
// same devices, so it runs later.
func (p *Placement) Consumers() []int {
	pair := p.Pairs()
	out := make([]int, len(p.Blocks))
	for i := range out {
		out[i] = -1
	}
	for g, f := range pair {
		if f < 0 {
			continue
		}
		k := kindInfo(p.Blocks[g].Kind)
		if k.InputGradient || out[f] < 0 {
			out[f] = g
		}
	}
	return out
}

// Offloadable reports whether instances of block i may be offloaded: a
// forward block with an offload time, a positive memory and a consumer.
// consumers is Consumers().
func (p *Placement) Offloadable(i int, consumers []int) bool {
	b := p.Blocks[i]
	return b.Kind == Forward && b.Offload > 0 && b.Memory > 0 && consumers[i] >= 0
}

// Recomputable reports whether instances of block i may be recomputed: a
// forward block declared so, whose memory exceeds its checkpoint, with a
// consumer. consumers is Consumers().
func (p *Placement) Recomputable(i int, consumers []int) bool {
	b := p.Blocks[i]
	return b.Kind == Forward && b.Recompute && b.Memory > b.Checkpoint && consumers[i] >= 0
}

// Allows reports whether action a is allowed for instances of block i
// (Keep always is).
func (p *Placement) Allows(i int, a Action, consumers []int) bool {
	switch a {
	case Keep:
		return true
	case Offload:
		return p.Offloadable(i, consumers)
	case Recompute:
		return p.Recomputable(i, consumers)
	}
	return false
}

// HasOffload reports whether some block may be offloaded.
func (p *Placement) HasOffload() bool {
	c := p.Consumers()
	for i := range p.Blocks {
		if p.Offloadable(i, c) {
			return true
		}
	}
	return false
}

// HasRecompute reports whether some block may be recomputed.
func (p *Placement) HasRecompute() bool {
	c := p.Consumers()
	for i := range p.Blocks {
		if p.Recomputable(i, c) {
			return true
		}
	}
	return false
}

// OffloadTime is the time the offload of block i's activation takes, and
// so does its reload: the block's Offload (set in the placement file, by
// WithOffload, or by a cluster's host links from its Activation size).
func (p *Placement) OffloadTime(i int) int { return p.Blocks[i].Offload }

// Freed is how much memory action a takes off block i's devices between
// the forward and its consumer: the forward's Memory for an offload, its
// Memory less its Checkpoint for a recompute, 0 for Keep.
func (p *Placement) Freed(i int, a Action) int {
	b := p.Blocks[i]
	switch a {
	case Offload:
		return b.Memory
	case Recompute:
		return b.Memory - b.Checkpoint
	}
	return 0
}

// HostChannel is the host channel device d's offloads and reloads use:
// the least device that shares d's PCIe switch (Switches, set by a
// cluster), or d itself.
func (p *Placement) HostChannel(d int) int {
	if d >= 0 && d < len(p.Switches) {
		return p.Switches[d]
	}
	return d
}

// BlockSwitches is the switches, each one host channel, that block i's
// offloads and reloads occupy: those of its devices (each moves its
// share), named as HostChannel names them, distinct and ascending.
func (p *Placement) BlockSwitches(i int) []int {
	var out []int
	for _, d := range p.Blocks[i].Devices {
		out = append(out, p.HostChannel(d))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The timing rule of a decision for an instance of forward block i that
// starts at start, and of its consumer that starts at use (OptPipe
// eqs 14–16):
//
//   - an offload starts no earlier than the forward ends:
//     offload ≥ start + t_i;
//   - its reload starts no earlier than the offload ends:
//     reload ≥ offload + OffloadTime(i);
//   - the reload ends no later than the consumer starts:
//     reload + OffloadTime(i) ≤ use;
//   - a recompute starts no earlier than the forward ends and ends no
//     later than the consumer starts: start + t_i ≤ again and
//     again + t_i ≤ use.
//
// On one host channel the moves run one at a time (eqs 10–13, and 18–19
// for channels shared through a PCIe switch); on a device a recompute is
// a block like any other (one block at a time).

// EarliestOffload is the earliest start of the offload of an instance of
// block i that starts at start.
func (p *Placement) EarliestOffload(i, start int) int { return start + p.Blocks[i].Time }

// EarliestReload is the earliest start of the reload of an activation of
// block i whose offload starts at offload.
func (p *Placement) EarliestReload(i, offload int) int { return offload + p.OffloadTime(i) }

// LatestReload is the latest start of the reload of an activation of
// block i whose consumer starts at use.
func (p *Placement) LatestReload(i, use int) int { return use - p.OffloadTime(i) }

// EarliestRecompute is the earliest start of the second run of an
// instance of block i that starts at start.
func (p *Placement) EarliestRecompute(i, start int) int { return start + p.Blocks[i].Time }

// LatestRecompute is the latest start of the second run of block i whose
// consumer starts at use.
func (p *Placement) LatestRecompute(i, use int) int { return use - p.Blocks[i].Time }

// WithOffload returns a copy of p in which every forward block with a
// positive memory and a consumer may be offloaded, each move taking t
// (t ≥ 1); blocks that declare an offload time keep theirs. It is what
// "--offload-time" gives a built-in placement.
func (p *Placement) WithOffload(t int) *Placement {
	q := p.Clone()
	c := q.Consumers()
	for i := range q.Blocks {
		b := &q.Blocks[i]
		if b.Kind == Forward && b.Memory > 0 && c[i] >= 0 && b.Offload == 0 {
			b.Offload = t
		}
	}
	return q
}

// WithRecompute returns a copy of p in which every forward block with a
// positive memory and a consumer may be recomputed; a block that declares
// none keeps a checkpoint of 0 (everything is computed again).
func (p *Placement) WithRecompute() *Placement {
	q := p.Clone()
	c := q.Consumers()
	for i := range q.Blocks {
		b := &q.Blocks[i]
		if b.Kind == Forward && b.Memory > b.Checkpoint && c[i] >= 0 {
			b.Recompute = true
		}
	}
	return q
}

// validateSavings checks the offload and recompute fields of every block
// (see Validate).
func (p *Placement) validateSavings() error {
	var consumers []int
	for i, b := range p.Blocks {
		switch {
		case b.RecomputedLayers < 0:
			return fmt.Errorf("%s: %d recomputed layers, want ≥ 0", blockName(i, b.ID), b.RecomputedLayers)
		case b.RecomputedLayers > 0 && b.Kind != Forward:
			return fmt.Errorf("%s: only a forward block's layers are recomputed, not a %s block's", blockName(i, b.ID), b.Kind)
		}
		if b.Offload == 0 && b.Activation == 0 && !b.Recompute && b.Checkpoint == 0 {
			continue
		}
		name := blockName(i, b.ID)
		switch {
		case b.Offload < 0 || b.Offload > MaxTime:
			return fmt.Errorf("%s: offload time must be in 0..%d, got %d", name, MaxTime, b.Offload)
		case !(b.Activation >= 0 && b.Activation <= MaxSize):
			return fmt.Errorf("%s: activation size must be in 0..%g, got %g", name, float64(MaxSize), b.Activation)
		case b.Checkpoint < 0:
			return fmt.Errorf("%s: checkpoint %d is negative", name, b.Checkpoint)
		case b.Kind != Forward:
			return fmt.Errorf("%s: only a forward block's activation can be offloaded or recomputed, not a %s block's", name, b.Kind)
		case b.Memory <= 0:
			return fmt.Errorf("%s: offload or recompute of an activation of memory %d (want > 0)", name, b.Memory)
		case b.Checkpoint >= b.Memory:
			return fmt.Errorf("%s: checkpoint %d must be less than the block's memory %d", name, b.Checkpoint, b.Memory)
		}
		if consumers == nil {
			consumers = p.Consumers()
		}
		if consumers[i] < 0 {
			return fmt.Errorf("%s: no gradient block needs its activation, so it cannot be offloaded or recomputed", name)
		}
	}
	if p.Switches != nil {
		if len(p.Switches) != p.Devices {
			return fmt.Errorf("host channels of %d devices, want %d", len(p.Switches), p.Devices)
		}
		for d, c := range p.Switches {
			if c < 0 || c > d || p.Switches[c] != c {
				return fmt.Errorf("device %d: host channel %d is not a device at or before it that is its own channel", d, c)
			}
		}
	}
	return nil
}

// Decisions says which decisions a search may take (the command line's
// --offload, --offload-time and --recompute).
type Decisions struct {
	Offload bool
	// OffloadTime, when > 0, is the offload time of every forward block
	// that may be offloaded and declares none (WithOffload).
	OffloadTime int
	Recompute   bool
}

// Any reports whether some decision is allowed.
func (o Decisions) Any() bool { return o.Offload || o.Recompute }

// Declare returns p with what o allows declared: with OffloadTime, every
// eligible forward block gets that offload time where it declares none;
// with Recompute and no block declared recomputable, every eligible
// forward block is (WithRecompute). It fails, naming the placement, when
// o asks for offload and no block may be offloaded, or for recompute and
// none may be recomputed. Without any decision p is returned as it is.
func Declare(p *Placement, o Decisions) (*Placement, error) {
	if o.OffloadTime < 0 || o.OffloadTime > MaxTime {
		return nil, fmt.Errorf("offload time must be in 1..%d, got %d", MaxTime, o.OffloadTime)
	}
	if o.OffloadTime > 0 && !o.Offload {
		return nil, fmt.Errorf("an offload time without offload")
	}
	if !o.Any() {
		return p, nil
	}
	q := p
	if o.OffloadTime > 0 {
		q = q.WithOffload(o.OffloadTime)
	}
	if o.Offload && !q.HasOffload() && !q.declaresActivation() {
		return nil, p.wrap(fmt.Errorf("no block may be offloaded: declare \"offload\" times in the placement file or give an offload time"))
	}
	if o.Recompute && !q.HasRecompute() {
		q = q.WithRecompute()
		if !q.HasRecompute() {
			return nil, p.wrap(fmt.Errorf("no forward block with memory has a gradient block that needs its activation: nothing to recompute"))
		}
	}
	return q, nil
}

// declaresActivation reports whether some block declares an activation
// size (which only a cluster's host link turns into an offload time).
func (p *Placement) declaresActivation() bool {
	for _, b := range p.Blocks {
		if b.Activation > 0 {
			return true
		}
	}
	return false
}

// Kept returns a copy of p in which no block may be offloaded or
// recomputed: the placement of schedules that keep every activation,
// whose bounds (the memory bound of package schedule) hold only there.
func (p *Placement) Kept() *Placement {
	q := p.Clone()
	for i := range q.Blocks {
		b := &q.Blocks[i]
		b.Offload, b.Activation, b.Recompute, b.Checkpoint = 0, 0, false, 0
	}
	return q
}
