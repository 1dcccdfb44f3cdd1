package schedule

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// Decision is what a schedule does with the activation of one forward
// instance B_i^n when it does not keep it on its devices until its
// consumer (placement's "Memory as a decision"): offload it (Start is when
// the offload starts, Reload when the reload starts; each takes the
// block's OffloadTime on its host channels) or recompute it (Start is
// when the forward's second run starts, on the block's devices, for its
// time; Reload is 0). A schedule lists one Decision per instance it does
// not keep, none for the others.
type Decision struct {
	Block  int
	Micro  int
	Action placement.Action // Offload or Recompute
	Start  int
	Reload int
}

// Ref returns the decision's forward instance.
func (d Decision) Ref() Ref { return Ref{d.Block, d.Micro} }

// Count returns how many instances s offloads and how many it
// recomputes.
func (s *Schedule) Count() (offloaded, recomputed int) {
	for _, d := range s.Decisions {
		switch d.Action {
		case placement.Offload:
			offloaded++
		case placement.Recompute:
			recomputed++
		}
	}
	return offloaded, recomputed
}

// Move is one transfer on a host channel: an offload or a reload of the
// activation of instance Ref, occupying Channel over [Start, End).
type Move struct {
	Ref     Ref
	Reload  bool
	Channel int
	Start   int
	End     int
}

// Moves returns the offloads and reloads of s's decisions (those that
// name an existing block), one per host channel of the block, sorted by
// channel, start, end, reload after offload, block and micro-batch.
func Moves(s *Schedule) []Move {
	p := s.Placement
	var out []Move
	for _, d := range s.Decisions {
		if d.Action != placement.Offload || d.Block < 0 || d.Block >= len(p.Blocks) {
			continue
		}
		t := p.OffloadTime(d.Block)
		for _, c := range p.BlockSwitches(d.Block) {
			out = append(out, Move{Ref: d.Ref(), Channel: c, Start: d.Start, End: d.Start + t},
				Move{Ref: d.Ref(), Reload: true, Channel: c, Start: d.Reload, End: d.Reload + t})
		}
	}
	slices.SortFunc(out, compareMoves)
	return out
}

func compareMoves(a, b Move) int {
	return cmp.Or(cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End),
		cmpBool(a.Reload, b.Reload), cmp.Compare(a.Ref.Block, b.Ref.Block), cmp.Compare(a.Ref.Micro, b.Ref.Micro))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Rerun is the second run of a recomputed forward instance: block Ref.Block
// on its devices over [Start, Start+t).
type Rerun struct {
	Ref   Ref
	Start int
}

// Reruns returns the second runs of s's recomputed instances (those that
// name an existing block), by start, block and micro-batch.
func Reruns(s *Schedule) []Rerun {
	p := s.Placement
	var out []Rerun
	for _, d := range s.Decisions {
		if d.Action == placement.Recompute && d.Block >= 0 && d.Block < len(p.Blocks) {
			out = append(out, Rerun{d.Ref(), d.Start})
		}
	}
	slices.SortFunc(out, func(a, b Rerun) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Ref.Block, b.Ref.Block), cmp.Compare(a.Ref.Micro, b.Ref.Micro))
	})
	return out
}

// memEvent is one change of a device's memory: a block instance's start
// (instance index x ≥ 0) or a decision's free or return (decision index
// dec ≥ 0, x = -1), at Time, in Phase (placement's memory phases).
type memEvent struct {
	time, phase int
	block       int
	micro       int
	delta       int
	x, dec      int
	free        bool
	// late: the backward of an overlapped pair, whose memory counts
	// after its forward's at their common start.
	late bool
}

// compareEvents orders one device's memory changes: by time, phase, then
// block, micro-batch and index (among block starts, the verifier's order
// of instances).
// It compares field by field and stops at the first that differs (cmp.Or
// would compare them all): the verifier sorts every event of a schedule
// of 10,000 micro-batches with it.
func compareEvents(a, b memEvent) int {
	if a.time != b.time {
		return cmp.Compare(a.time, b.time)
	}
	if a.phase != b.phase {
		return cmp.Compare(a.phase, b.phase)
	}
	if a.late != b.late {
		return cmpBool(a.late, b.late)
	}
	return cmp.Or(cmp.Compare(a.block, b.block), cmp.Compare(a.micro, b.micro), cmp.Compare(a.x, b.x), cmp.Compare(a.dec, b.dec))
}

// memoryEvents lists, for every device, the changes of its memory in
// order: the starts of the instances xs[d] (from deviceInstances) and the
// frees and returns of the decisions with useDec[k] (all that name an
// existing block when useDec is nil).
func memoryEvents(s *Schedule, xs [][]int, useDec []bool) [][]memEvent {
	p := s.Placement
	out := make([][]memEvent, p.Devices)
	size := make([]int, p.Devices)
	for d, list := range xs {
		size[d] = len(list)
	}
	for _, dc := range s.Decisions {
		if dc.Block >= 0 && dc.Block < len(p.Blocks) {
			for _, d := range p.Blocks[dc.Block].Devices {
				size[d] += 2
			}
		}
	}
	for d := range out {
		out[d] = make([]memEvent, 0, size[d])
	}
	pg := newPairing(s, nil)
	for d, list := range xs {
		for _, x := range list {
			in := s.Instances[x]
			out[d] = append(out[d], memEvent{time: in.Start, phase: placement.PhaseBlock, block: in.Block, micro: in.Micro,
				delta: p.Blocks[in.Block].Memory, x: x, dec: -1, late: pg.follower(in.Ref())})
		}
	}
	var starts firstStarts
	if len(s.Decisions) > 0 {
		starts = newFirstStarts(s)
	}
	for k, dc := range s.Decisions {
		if useDec != nil && !useDec[k] || dc.Block < 0 || dc.Block >= len(p.Blocks) {
			continue
		}
		freed := p.Freed(dc.Block, dc.Action)
		if freed == 0 {
			continue
		}
		var free, back int
		switch dc.Action {
		case placement.Offload:
			free, back = dc.Start+p.OffloadTime(dc.Block), dc.Reload
		case placement.Recompute:
			start, ok := starts.of(dc.Ref())
			if !ok {
				continue
			}
			free, back = p.EarliestRecompute(dc.Block, start), dc.Start
		}
		for _, d := range p.Blocks[dc.Block].Devices {
			out[d] = append(out[d],
				memEvent{time: free, phase: placement.PhaseFree, block: dc.Block, micro: dc.Micro, delta: -freed, x: -1, dec: k, free: true},
				memEvent{time: back, phase: placement.PhaseReturn, block: dc.Block, micro: dc.Micro, delta: freed, x: -1, dec: k})
		}
	}
	for _, evs := range out {
		slices.SortFunc(evs, compareEvents)
	}
	return out
}

// firstStarts is the start of the first instance of every (block,
// micro-batch) of a schedule: by index where both are in range (a map
// of 10,000 × 16 instances cost a fifth of a verification), in a map
// for the others (an invalid schedule's, which the verifier names).
type firstStarts struct {
	k     int
	dense []int // start + 1; 0: none
	other map[Ref]int
}

func newFirstStarts(s *Schedule) firstStarts {
	k, n := len(s.Placement.Blocks), s.MicroBatches
	fs := firstStarts{k: k, dense: make([]int, k*max(n, 0))}
	for _, in := range s.Instances {
		if in.Block >= 0 && in.Block < k && in.Micro >= 0 && in.Micro < n {
			if x := in.Micro*k + in.Block; fs.dense[x] == 0 {
				fs.dense[x] = in.Start + 1
			}
			continue
		}
		if fs.other == nil {
			fs.other = map[Ref]int{}
		}
		if _, dup := fs.other[in.Ref()]; !dup {
			fs.other[in.Ref()] = in.Start
		}
	}
	return fs
}

func (fs firstStarts) of(r Ref) (int, bool) {
	if r.Block >= 0 && r.Block < fs.k && r.Micro >= 0 && r.Micro*fs.k+r.Block < len(fs.dense) {
		v := fs.dense[r.Micro*fs.k+r.Block]
		return v - 1, v > 0
	}
	start, ok := fs.other[r]
	return start, ok
}

// eventName says what a memory change is, for the verifier's messages.
func eventName(s *Schedule, e memEvent) string {
	if e.x >= 0 {
		return refName(s, Ref{e.block, e.micro})
	}
	r := refName(s, Ref{e.block, e.micro})
	switch {
	case s.Decisions[e.dec].Action == placement.Offload && e.free:
		return "the end of the offload of " + r
	case s.Decisions[e.dec].Action == placement.Offload:
		return "the reload of " + r
	case e.free:
		return fmt.Sprintf("the end of %s (recomputed later)", r)
	}
	return "the recompute of " + r
}
