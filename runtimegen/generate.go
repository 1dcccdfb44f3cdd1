package runtimegen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// transfer is one tensor crossing devices: dependency dep of micro-batch
// micro, from device src to device dst.
type transfer struct {
	tag      int
	src, dst int
	from, to int // block indices
	micro    int
	tensor   string
	producer int // index of the producer in the global order
	consumer int // index of the consumer in the global order
}

// plan is what programs of both modes are built from.
type plan struct {
	p         *placement.Placement
	order     []schedule.Instance // the global order
	transfers []transfer          // in the global order of their producers
	byProd    [][]int             // per global position: its transfers
	// before is, per device and index of a block it runs (in the global
	// order), the memory ops to issue before it; after, those to issue
	// after its last block.
	before map[[2]int][]Op
	after  [][]Op
}

// placeActions puts each memory action before the first block on its
// device that starts at or after it.
func (pl *plan) placeActions(acts []MemoryAction) error {
	p := pl.p
	pl.before = map[[2]int][]Op{}
	pl.after = make([][]Op, p.Devices)
	if len(acts) == 0 {
		return nil
	}
	acts = slices.Clone(acts)
	rank := map[OpKind]int{Offload: 0, Reload: 1, Recompute: 2}
	slices.SortStableFunc(acts, func(x, y MemoryAction) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(rank[x.Kind], rank[y.Kind]),
			cmp.Compare(x.Block, y.Block), cmp.Compare(x.Micro, y.Micro))
	})
	starts := make([][]int, p.Devices) // per device: starts of its blocks, in order
	for _, in := range pl.order {
		for _, d := range p.Blocks[in.Block].Devices {
			starts[d] = append(starts[d], in.Start)
		}
	}
	for _, a := range acts {
		if a.Block < 0 || a.Block >= len(p.Blocks) || !(Op{Kind: a.Kind}).IsMemory() {
			return fmt.Errorf("memory action %s of block %d: not an offload, reload or recompute of a block", a.Kind, a.Block)
		}
		b := p.Blocks[a.Block]
		if len(b.Devices) != 1 {
			return fmt.Errorf("%s %s@%d: block on devices %v; only a block on one device offloads or recomputes", a.Kind, b.ID, a.Micro, b.Devices)
		}
		d := b.Devices[0]
		k, _ := slices.BinarySearch(starts[d], a.Start)
		// Blocks that start together with the action come after it; a
		// block that starts before it, before it (BinarySearch finds the
		// first start ≥ a.Start).
		o := Op{Kind: a.Kind, Block: b.ID, Micro: a.Micro}
		if k == len(starts[d]) {
			pl.after[d] = append(pl.after[d], o)
		} else {
			pl.before[[2]int{d, k}] = append(pl.before[[2]int{d, k}], o)
		}
	}
	return nil
}

// Generate turns a valid schedule into one program per device (see the
// package doc for the order and why it cannot deadlock). The schedule is
// verified first; an invalid one is an error.
func Generate(s *schedule.Schedule, mode Mode) ([]*Program, error) {
	if len(s.Pairs) > 0 {
		return nil, fmt.Errorf("the schedule overlaps %d forward-backward pairs, which the per-device programs do not express yet (export it with --format torch-csv, whose OVERLAP_F_B does)", len(s.Pairs))
	}
	if len(s.LinkOrder) > 0 {
		return nil, fmt.Errorf("the schedule records its own order of transfers on %d links (link_order), which the per-device programs do not follow yet: their sends go in the order their producers start", len(s.LinkOrder))
	}
	return generateWith(s, mode, memoryActions(s))
}

// MemoryAction is an offload, a reload or a recompute of forward instance
// Block@Micro (a block index), issued at Start on the block's device.
type MemoryAction struct {
	Kind         OpKind // Offload, Reload or Recompute
	Block, Micro int
	Start        int
}

// memoryActions lists what a schedule's decisions offload, reload and
// recompute (schedule.Decision): an offload and its reload at their
// starts, a recompute at its second run's start.
func memoryActions(s *schedule.Schedule) []MemoryAction {
	var acts []MemoryAction
	for _, d := range s.Decisions {
		switch d.Action {
		case placement.Offload:
			acts = append(acts, MemoryAction{Kind: Offload, Block: d.Block, Micro: d.Micro, Start: d.Start},
				MemoryAction{Kind: Reload, Block: d.Block, Micro: d.Micro, Start: d.Reload})
		case placement.Recompute:
			acts = append(acts, MemoryAction{Kind: Recompute, Block: d.Block, Micro: d.Micro, Start: d.Start})
		}
	}
	return acts
}

// generateWith is Generate with the memory actions to put into the programs:
// each on its forward block's device, before the first block there that
// starts at or after it (after the ones that start before it).
func generateWith(s *schedule.Schedule, mode Mode, acts []MemoryAction) ([]*Program, error) {
	if !slices.Contains(Modes(), mode) {
		return nil, fmt.Errorf("unknown mode %q (want one of %v)", mode, Modes())
	}
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	pl := newPlan(s)
	if err := pl.placeActions(acts); err != nil {
		return nil, err
	}
	progs := make([]*Program, s.Placement.Devices)
	infos := BlockInfos(s.Placement)
	groups := Groups(s.Placement)
	for d := range progs {
		progs[d] = &Program{
			Placement:    s.Placement.Name,
			Device:       d,
			Devices:      s.Placement.Devices,
			Mode:         mode,
			MicroBatches: s.MicroBatches,
			Groups:       groups,
			Blocks:       infos,
			Ops:          []Op{},
		}
	}
	if mode == Blocking {
		pl.blocking(progs)
	} else {
		pl.nonBlocking(progs)
	}
	return progs, nil
}

// GlobalOrder returns the instances of s in the order every program
// follows: by start time, then first device, then block, then micro-batch
// (§IV-D's topological sort: blocks starting together are consecutive and
// each device's blocks keep the schedule's order).
func GlobalOrder(s *schedule.Schedule) []schedule.Instance {
	p := s.Placement
	ins := slices.Clone(s.Instances)
	slices.SortStableFunc(ins, func(x, y schedule.Instance) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start),
			cmp.Compare(p.Blocks[x.Block].Devices[0], p.Blocks[y.Block].Devices[0]),
			cmp.Compare(x.Block, y.Block), cmp.Compare(x.Micro, y.Micro))
	})
	return ins
}

func newPlan(s *schedule.Schedule) *plan {
	p := s.Placement
	pl := &plan{p: p, order: GlobalOrder(s)}
	pos := make(map[schedule.Ref]int, len(pl.order))
	for i, in := range pl.order {
		pos[in.Ref()] = i
	}
	pl.byProd = make([][]int, len(pl.order))
	for i, in := range pl.order {
		src := p.Blocks[in.Block]
		for _, dep := range p.Deps {
			if dep.From != in.Block {
				continue
			}
			dst := p.Blocks[dep.To]
			for _, d := range dst.Devices {
				// A device of the producer's group already holds the
				// tensor; the others get it from the group's first device.
				if slices.Contains(src.Devices, d) {
					continue
				}
				pl.byProd[i] = append(pl.byProd[i], len(pl.transfers))
				pl.transfers = append(pl.transfers, transfer{
					tag: len(pl.transfers), src: src.Devices[0], dst: d,
					from: dep.From, to: dep.To, micro: in.Micro,
					tensor:   TensorName(src.ID, dst.ID, in.Micro),
					producer: i, consumer: pos[schedule.Ref{Block: dep.To, Micro: in.Micro}],
				})
			}
		}
	}
	return pl
}

// computeOp is the op that runs instance in on one of its devices.
func (pl *plan) computeOp(in schedule.Instance) Op {
	b := pl.p.Blocks[in.Block]
	k := Compute
	if len(b.Devices) > 1 {
		k = Collective
	}
	return Op{Kind: k, Block: b.ID, Micro: in.Micro}
}

func (pl *plan) sendOp(t transfer) Op {
	return Op{Kind: Send, Block: pl.p.Blocks[t.from].ID, Micro: t.micro, Peer: t.dst, Tensor: t.tensor, Tag: t.tag}
}

func (pl *plan) recvOp(t transfer) Op {
	return Op{Kind: Recv, Block: pl.p.Blocks[t.to].ID, Micro: t.micro, Peer: t.src, Tensor: t.tensor, Tag: t.tag}
}

// blocking: each instance on its devices, then each of its transfers as a
// send on the source and a receive on the destination, inline.
func (pl *plan) blocking(progs []*Program) {
	k := make([]int, len(progs)) // per device: blocks run so far
	for i, in := range pl.order {
		for _, d := range pl.p.Blocks[in.Block].Devices {
			progs[d].Ops = append(progs[d].Ops, pl.before[[2]int{d, k[d]}]...)
			k[d]++
			progs[d].Ops = append(progs[d].Ops, pl.computeOp(in))
		}
		for _, x := range pl.byProd[i] {
			t := pl.transfers[x]
			progs[t.src].Ops = append(progs[t.src].Ops, pl.sendOp(t))
			progs[t.dst].Ops = append(progs[t.dst].Ops, pl.recvOp(t))
		}
	}
	for d := range progs {
		progs[d].Ops = append(progs[d].Ops, pl.after[d]...)
	}
}

// nonBlocking: on every device, in global order, for each instance it
// runs: the receives posted there, the waits of the instance's inputs, the
// instance, the sends of its outputs; then a wait for every send.
//
// A receive is posted before the first instance on its device that is
// scheduled to end after the producer starts: early enough that the
// transfer can overlap the producer and whatever runs meanwhile, late
// enough that a device holds buffers only for tensors whose producers are
// already running. Its consumer is such an instance, so the receive is
// posted before it is waited for.
func (pl *plan) nonBlocking(progs []*Program) {
	D := pl.p.Devices
	runs := make([][]int, D) // per device: global positions it runs
	for i, in := range pl.order {
		for _, d := range pl.p.Blocks[in.Block].Devices {
			runs[d] = append(runs[d], i)
		}
	}
	end := func(i int) int { return pl.order[i].Start + pl.p.Blocks[pl.order[i].Block].Time }
	type slot struct{ posts, waits []int } // transfer indices before a run
	slots := make([][]slot, D)
	for d := range slots {
		slots[d] = make([]slot, len(runs[d]))
	}
	local := make([]map[int]int, D) // global position → index in runs[d]
	for d := range runs {
		local[d] = make(map[int]int, len(runs[d]))
		for k, i := range runs[d] {
			local[d][i] = k
		}
	}
	for x, t := range pl.transfers {
		start := pl.order[t.producer].Start
		k, _ := slices.BinarySearchFunc(runs[t.dst], start, func(i, s int) int {
			// Ends along a device's order are increasing.
			return cmp.Compare(end(i), s+1)
		})
		slots[t.dst][k].posts = append(slots[t.dst][k].posts, x)
		c := local[t.dst][t.consumer]
		slots[t.dst][c].waits = append(slots[t.dst][c].waits, x)
	}
	for d, prog := range progs {
		var sends []int
		for k, i := range runs[d] {
			prog.Ops = append(prog.Ops, pl.before[[2]int{d, k}]...)
			for _, x := range slots[d][k].posts {
				prog.Ops = append(prog.Ops, pl.recvOp(pl.transfers[x]))
			}
			for _, x := range slots[d][k].waits {
				o := pl.recvOp(pl.transfers[x])
				o.Kind = Wait
				prog.Ops = append(prog.Ops, o)
			}
			prog.Ops = append(prog.Ops, pl.computeOp(pl.order[i]))
			for _, x := range pl.byProd[i] {
				if t := pl.transfers[x]; t.src == d {
					prog.Ops = append(prog.Ops, pl.sendOp(t))
					sends = append(sends, x)
				}
			}
		}
		prog.Ops = append(prog.Ops, pl.after[d]...)
		for _, x := range sends {
			o := pl.sendOp(pl.transfers[x])
			o.Kind = Wait
			prog.Ops = append(prog.Ops, o)
		}
	}
}

// Groups returns the device groups of p's group blocks (more than one
// device), distinct, in lexicographic order.
func Groups(p *placement.Placement) [][]int {
	var gs [][]int
	for _, b := range p.Blocks {
		if len(b.Devices) > 1 && !slices.ContainsFunc(gs, func(g []int) bool { return slices.Equal(g, b.Devices) }) {
			gs = append(gs, slices.Clone(b.Devices))
		}
	}
	slices.SortFunc(gs, slices.Compare)
	if gs == nil {
		gs = [][]int{}
	}
	return gs
}

// BlockInfos describes every block of p for a worker: the roles of its
// dependencies and the forward block each gradient block differentiates
// (placement.Placement.Pairs). p must be valid.
func BlockInfos(p *placement.Placement) []BlockInfo {
	pair := p.Pairs()
	deps := make(map[placement.Dep]bool, len(p.Deps))
	for _, d := range p.Deps {
		deps[d] = true
	}
	// origin is the forward block whose computation a block belongs to:
	// itself for a forward block, its pair for a gradient block.
	origin := func(i int) int {
		if kindInfo(p.Blocks[i].Kind).Gradient {
			return pair[i]
		}
		return i
	}
	role := func(d placement.Dep) Role {
		from, to := kindInfo(p.Blocks[d.From].Kind), kindInfo(p.Blocks[d.To].Kind)
		switch {
		case !from.Gradient && !to.Gradient:
			return Activation
		case to.Gradient && pair[d.To] >= 0 && origin(d.From) == pair[d.To] &&
			(!from.Gradient || from.InputGradient && !from.WeightGradient && !to.InputGradient):
			// A forward block's activations kept for its own gradient
			// blocks, or what an input block kept for its weight block.
			return Saved
		case from.InputGradient && to.InputGradient && pair[d.From] >= 0 && pair[d.To] >= 0 &&
			deps[placement.Dep{From: pair[d.To], To: pair[d.From]}]:
			return Gradient
		}
		return Order
	}
	infos := make([]BlockInfo, len(p.Blocks))
	for i, b := range p.Blocks {
		infos[i] = BlockInfo{ID: b.ID, Kind: b.Kind, Devices: slices.Clone(b.Devices), Time: b.Time,
			Inputs: []Port{}, Outputs: []Port{}}
		if pair[i] >= 0 {
			infos[i].Forward = p.Blocks[pair[i]].ID
		}
	}
	for _, d := range p.Deps {
		r := role(d)
		infos[d.To].Inputs = append(infos[d.To].Inputs, Port{Block: p.Blocks[d.From].ID, Role: r})
		infos[d.From].Outputs = append(infos[d.From].Outputs, Port{Block: p.Blocks[d.To].ID, Role: r})
	}
	return infos
}

// kindInfo is the kind table's entry; a placement that validated has only
// known kinds.
func kindInfo(k placement.Kind) placement.KindInfo {
	in, _ := k.Info()
	return in
}

// CheckTrainable reports why a worker could not train p, or nil. Every
// gradient block must have a forward block to differentiate
// (placement.Placement.Pairs). A
// block that computes an input gradient (backward, input) must receive the
// gradient of its forward's output, from a loss (the forward feeds no
// other forward block) or from the gradient blocks of the consumers. A
// forward block with an input block needs a weight block that depends on
// it directly (the weight block uses what the input block kept), and a
// weight block needs such an input block.
func CheckTrainable(p *placement.Placement) error {
	infos := BlockInfos(p)
	pair := p.Pairs()
	for i, b := range infos {
		k := kindInfo(b.Kind)
		if !k.Gradient {
			continue
		}
		if b.Forward == "" {
			return fmt.Errorf("%s block %q: no forward block on devices %v runs before it", b.Kind, b.ID, b.Devices)
		}
		f := infos[p.Index(b.Forward)]
		if k.InputGradient {
			sink := !slices.ContainsFunc(f.Outputs, func(q Port) bool { return q.Role == Activation })
			grad := slices.ContainsFunc(b.Inputs, func(q Port) bool { return q.Role == Gradient })
			if !sink && !grad {
				return fmt.Errorf("%s block %q: forward %q feeds other forward blocks but no dependency brings %q the gradient from their gradient blocks", b.Kind, b.ID, f.ID, b.ID)
			}
		}
		if k.InputGradient == k.WeightGradient {
			continue // a whole backward
		}
		// The other half of a split backward: the weight block of an input
		// block, or the input block of a weight block.
		partner := -1
		for j := range infos {
			jk := kindInfo(infos[j].Kind)
			if j != i && pair[j] == pair[i] && jk.InputGradient != jk.WeightGradient && jk.InputGradient != k.InputGradient {
				partner = j
			}
		}
		if partner < 0 {
			missing := placement.Weight
			if !k.InputGradient {
				missing = placement.Input
			}
			return fmt.Errorf("%s block %q: forward %q has no %s block to complete its backward", b.Kind, b.ID, f.ID, missing)
		}
		in, w := i, partner
		if !k.InputGradient {
			in, w = partner, i
		}
		if !slices.Contains(infos[w].Inputs, Port{Block: infos[in].ID, Role: Saved}) {
			return fmt.Errorf("weight block %q: needs a dependency on input block %q, whose saved state it uses", infos[w].ID, infos[in].ID)
		}
	}
	return nil
}
