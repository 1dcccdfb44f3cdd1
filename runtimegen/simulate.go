package runtimegen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// Result is what a simulated run of a set of programs achieved.
type Result struct {
	Mode       Mode
	CommTime   int   // per transfer, when not timed by a placement
	Transfers  int   // tensors that crossed devices
	Makespan   int   // when the last device finished its program
	Busy       []int // per device: time spent computing
	Idle       []int // per device: Makespan − Busy
	BubbleRate float64
	// LinkWait is the time transfers waited for their link, in
	// total (SimOptions.QueuedLinks; 0 without).
	LinkWait int
	// ReloadWait is the time gradient blocks waited for a reload still on
	// its host channel, in total (SimOptions.Offloads; 0 without).
	ReloadWait int
}

// SimOptions configure SimulateWith.
type SimOptions struct {
	// CommTime is every transfer's time when Placement is nil.
	CommTime int
	// Placement, when set, times the run: every block takes its time
	// there, and every transfer c_ij, its dependency's transfer time
	// (placement's Transfer) — the rule a schedule on that placement was
	// made with, so that a compacted schedule's non-blocking programs end
	// exactly at its makespan. Its blocks must be the programs' (same ids
	// and devices); their times may differ (a cluster's).
	Placement *placement.Placement
	// QueuedLinks makes each ordered pair of devices a link that carries
	// one transfer at a time, in the order of the transfers' tags (the
	// order every program issues them, which is the order of placement's
	// LinkQueue): transfers contend where they share one. A transfer that
	// takes no time holds no link. Without it they never do.
	QueuedLinks bool
	// Offloads, when set, times the offloads and reloads with its rules
	// (placement's "Memory as a decision"): each takes its block's
	// OffloadTime on the host channels of its devices (BlockSwitches:
	// devices on one PCIe switch share one), which carry one move at a
	// time; a move starts when the device issues it (a reload not before
	// its offload has ended) and the channel is free, taking the earliest
	// free stretch long enough. The consumer of an offloaded instance
	// (placement's Consumers: the block that computes the gradient of the
	// forward's inputs) waits for its reload to end: a reload that is late
	// delays the backward. Its blocks must be the programs'. Without it
	// the moves take no time.
	Offloads *placement.Placement
}

// Simulate runs the programs (checked first with Check) event by event:
// a compute takes its block's time on its device; a collective starts when
// every member of its group has reached it and takes the block's time on
// all of them; a transfer starts when both its send and its receive are
// posted and takes commTime; a blocking send or receive returns when its
// transfer is over (rendezvous), a posted one at once, and a wait returns
// when its transfer is over. A recompute takes its forward block's time on
// its device; an offload or a reload is only issued there (the host
// channel is simulated only with SimOptions.Offloads: its copies take no
// device time). Devices run
// as soon as they can, without looking at the schedule's start times.
//
// Each operation is an event whose time follows from the events it waits
// for, and no two transfers compete for a link (with queued links, those
// of a link go in tag order), so the order in which the simulator evaluates
// events never changes a time: the result is deterministic. When devices wait for each other in a cycle the result is
// a *DeadlockError naming the cycle.
func Simulate(progs []*Program, commTime int) (*Result, error) {
	return SimulateWith(progs, SimOptions{CommTime: commTime})
}

// SimulateWith is Simulate with a placement's times and, optionally,
// queued links (SimOptions). With queued links a transfer starts when
// both ends are posted and its link is free; transfers on one link go in
// tag order.
func SimulateWith(progs []*Program, opt SimOptions) (*Result, error) {
	if opt.CommTime < 0 {
		return nil, fmt.Errorf("communication time %d is negative", opt.CommTime)
	}
	if err := Check(progs); err != nil {
		return nil, fmt.Errorf("programs: %w", err)
	}
	sim, err := newSim(progs, opt)
	if err != nil {
		return nil, err
	}
	for sim.step() {
	}
	if err := sim.stuck(); err != nil {
		return nil, err
	}
	r := &Result{Mode: progs[0].Mode, CommTime: opt.CommTime, Transfers: len(sim.xfer), Busy: sim.busy, Idle: make([]int, len(progs)),
		LinkWait: sim.waited, ReloadWait: sim.reloadWait}
	for _, c := range sim.clock {
		r.Makespan = max(r.Makespan, c)
	}
	idle := 0
	for d, b := range sim.busy {
		r.Idle[d] = r.Makespan - b
		idle += r.Idle[d]
	}
	if r.Makespan > 0 {
		r.BubbleRate = float64(idle) / float64(len(progs)*r.Makespan)
	}
	return r, nil
}

// xfer is the state of one transfer.
type xfer struct {
	sendAt, recvAt int // post times, -1 until posted
	start          int // when it starts moving, -1 until known
	time           int // how long it takes
	link           [2]int
}

func (x xfer) posted() bool { return x.sendAt >= 0 && x.recvAt >= 0 }

type sim struct {
	progs  []*Program
	times  map[string]int
	groups map[string][]int
	pc     []int
	clock  []int // when the device finished its last op
	busy   []int
	posted []bool // the op at pc is a blocking send/recv already posted
	xfer   map[int]*xfer
	queued bool
	queue  map[[2]int][]int // per link: its transfers' tags, ascending, not yet started
	free   map[[2]int]int   // per link: when its last transfer ends
	waited int
	host   *hostSim // nil without SimOptions.Offloads
	// reloadWait is the time consumers waited for their reloads.
	reloadWait int
}

// hostSim is the host channels of SimOptions.Offloads.
type hostSim struct {
	p        *placement.Placement
	busy     map[int][][2]int // per host channel: busy stretches [from, to), ascending
	offEnd   map[instanceKey]int
	reloaded map[instanceKey]int // per forward instance: when its reload ends
	// awaits is, per consumer instance, the forward instance whose reload
	// it waits for.
	awaits map[instanceKey]instanceKey
}

type instanceKey struct {
	block string
	micro int
}

// newHostSim times the moves of the programs' offloads with p.
func newHostSim(p *placement.Placement, progs []*Program) (*hostSim, error) {
	h := &hostSim{p: p, busy: map[int][][2]int{}, offEnd: map[instanceKey]int{}, reloaded: map[instanceKey]int{}, awaits: map[instanceKey]instanceKey{}}
	consumers := p.Consumers()
	for _, prog := range progs {
		for _, o := range prog.Ops {
			if o.Kind != Offload {
				continue
			}
			i := p.Index(o.Block)
			if i < 0 {
				return nil, fmt.Errorf("placement %q: no block %q to offload", p.Name, o.Block)
			}
			if c := consumers[i]; c >= 0 {
				h.awaits[instanceKey{p.Blocks[c].ID, o.Micro}] = instanceKey{o.Block, o.Micro}
			}
		}
	}
	return h, nil
}

// move books a move of block's activation, ready at ready, on every host
// channel of the block: the earliest start at or after ready where all
// of them are free for its time. It returns when the move ends.
func (h *hostSim) move(block string, ready int) int {
	i := h.p.Index(block)
	t := h.p.OffloadTime(i)
	chans := h.p.BlockSwitches(i)
	start := ready
	for moved := true; moved; {
		moved = false
		for _, c := range chans {
			for _, b := range h.busy[c] {
				if b[0] < start+t && start < b[1] {
					start, moved = b[1], true
				}
			}
		}
	}
	if t > 0 {
		for _, c := range chans {
			k, _ := slices.BinarySearchFunc(h.busy[c], start, func(b [2]int, at int) int { return b[0] - at })
			h.busy[c] = slices.Insert(h.busy[c], k, [2]int{start, start + t})
		}
	}
	return start + t
}

func newSim(progs []*Program, opt SimOptions) (*sim, error) {
	s := &sim{progs: progs, times: map[string]int{}, groups: map[string][]int{}, xfer: map[int]*xfer{},
		queued: opt.QueuedLinks, queue: map[[2]int][]int{}, free: map[[2]int]int{}}
	for _, b := range progs[0].Blocks {
		s.times[b.ID] = b.Time
		s.groups[b.ID] = b.Devices
	}
	p := opt.Placement
	if p != nil {
		for _, b := range progs[0].Blocks {
			i := p.Index(b.ID)
			if i < 0 || !slices.Equal(p.Blocks[i].Devices, b.Devices) {
				return nil, fmt.Errorf("placement %q: no block %q on devices %v as in the programs", p.Name, b.ID, b.Devices)
			}
			s.times[b.ID] = p.Blocks[i].Time
		}
	}
	if opt.Offloads != nil {
		h, err := newHostSim(opt.Offloads, progs)
		if err != nil {
			return nil, err
		}
		s.host = h
	}
	n := len(progs)
	s.pc, s.clock, s.busy, s.posted = make([]int, n), make([]int, n), make([]int, n), make([]bool, n)
	for d, prog := range progs {
		for _, o := range prog.Ops {
			if o.Kind != Send {
				continue
			}
			x := &xfer{sendAt: -1, recvAt: -1, start: -1, time: opt.CommTime, link: [2]int{d, o.Peer}}
			if p != nil {
				from, to, _, err := SplitTensorName(o.Tensor)
				if err != nil {
					return nil, err
				}
				dep := placement.Dep{From: p.Index(from), To: p.Index(to)}
				if dep.From < 0 || dep.To < 0 || !slices.Contains(p.Deps, dep) {
					return nil, fmt.Errorf("placement %q: no dependency %s -> %s for tensor %s", p.Name, from, to, o.Tensor)
				}
				x.time = p.Transfer(dep)
			}
			s.xfer[o.Tag] = x
			if x.time > 0 { // a transfer that takes no time holds no link (placement's Links)
				s.queue[x.link] = append(s.queue[x.link], o.Tag)
			}
		}
	}
	for _, q := range s.queue {
		slices.Sort(q)
	}
	return s, nil
}

// settle starts every posted transfer that can start: at once without
// queued links, else in tag order when its link is free.
func (s *sim) settle(x *xfer) {
	if !x.posted() || x.start >= 0 {
		return
	}
	if !s.queued || x.time == 0 {
		x.start = max(x.sendAt, x.recvAt)
		return
	}
	ch := x.link
	for len(s.queue[ch]) > 0 {
		y := s.xfer[s.queue[ch][0]]
		if !y.posted() {
			return
		}
		ready := max(y.sendAt, y.recvAt)
		y.start = max(ready, s.free[ch])
		s.waited += y.start - ready
		s.free[ch] = y.start + y.time
		s.queue[ch] = s.queue[ch][1:]
	}
}

func (s *sim) op(d int) (Op, bool) {
	if s.pc[d] >= len(s.progs[d].Ops) {
		return Op{}, false
	}
	return s.progs[d].Ops[s.pc[d]], true
}

func (s *sim) done(x *xfer) int { return x.start + x.time }

// step advances every device as far as it can and reports progress.
func (s *sim) step() bool {
	progress := false
	for d := range s.progs {
		for s.advance(d) {
			progress = true
		}
	}
	return progress
}

// advance runs device d's next op if it can.
func (s *sim) advance(d int) bool {
	o, ok := s.op(d)
	if !ok {
		return false
	}
	blocking := s.progs[d].Mode == Blocking
	if h := s.host; h != nil && (o.Kind == Compute || o.Kind == Collective) {
		if f, ok := h.awaits[instanceKey{o.Block, o.Micro}]; ok {
			end, ok := h.reloaded[f]
			if !ok {
				return false // its reload is not issued yet
			}
			if end > s.clock[d] {
				s.reloadWait += end - s.clock[d]
				s.clock[d] = end
			}
		}
	}
	switch o.Kind {
	case Compute:
		t := s.times[o.Block]
		s.clock[d] += t
		s.busy[d] += t
	case Recompute:
		t := s.times[o.Block]
		s.clock[d] += t
		s.busy[d] += t
	case Offload, Reload:
		// Copies on the host channel, beside the computation: the device
		// only issues them (timed with SimOptions.Offloads).
		if h := s.host; h != nil {
			k := instanceKey{o.Block, o.Micro}
			if o.Kind == Offload {
				h.offEnd[k] = h.move(o.Block, s.clock[d])
			} else {
				off, ok := h.offEnd[k]
				if !ok {
					return false // its offload is not issued yet
				}
				h.reloaded[k] = h.move(o.Block, max(s.clock[d], off))
			}
		}
	case Collective:
		members := s.groups[o.Block]
		start := 0
		for _, m := range members {
			mo, ok := s.op(m)
			if !ok || mo.Kind != Collective || mo.Block != o.Block || mo.Micro != o.Micro {
				return false
			}
			start = max(start, s.clock[m])
		}
		t := s.times[o.Block]
		for _, m := range members {
			s.clock[m] = start + t
			s.busy[m] += t
			s.pc[m]++
		}
		return true
	case Send, Recv:
		x := s.xfer[o.Tag]
		if !s.posted[d] {
			if o.Kind == Send {
				x.sendAt = s.clock[d]
			} else {
				x.recvAt = s.clock[d]
			}
			s.posted[d] = true
			s.settle(x)
		}
		if blocking {
			if x.start < 0 {
				return false
			}
			s.clock[d] = s.done(x)
		}
		s.posted[d] = false
	case Wait:
		x := s.xfer[o.Tag]
		if x.start < 0 {
			return false
		}
		s.clock[d] = max(s.clock[d], s.done(x))
	}
	s.pc[d]++
	return true
}

// Waiting is one device of a deadlock: where it stopped and for whom.
type Waiting struct {
	Device   int
	Index    int // of the op in the device's program
	Op       Op
	WaitsFor int // device
}

// DeadlockError is a cycle of devices, each waiting for the next (the last
// for the first), none of which can go on.
type DeadlockError struct {
	Cycle []Waiting
}

func (e *DeadlockError) Error() string {
	var b strings.Builder
	b.WriteString("deadlock: ")
	for i, w := range e.Cycle {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "device %d at op %d (%s) waits for device %d", w.Device, w.Index, w.Op, w.WaitsFor)
	}
	return b.String()
}

// stuck returns nil when every program ran to its end, or the cycle of
// waiting devices.
func (s *sim) stuck() error {
	waits := map[int]Waiting{}
	first := -1
	for d := range s.progs {
		o, ok := s.op(d)
		if !ok {
			continue
		}
		w := Waiting{Device: d, Index: s.pc[d], Op: o, WaitsFor: o.Peer}
		if o.Kind == Collective {
			for _, m := range s.groups[o.Block] {
				if mo, ok := s.op(m); !ok || mo.Kind != Collective || mo.Block != o.Block || mo.Micro != o.Micro {
					w.WaitsFor = m
					break
				}
			}
		}
		waits[d] = w
		if first < 0 {
			first = d
		}
	}
	if first < 0 {
		return nil
	}
	// Every stuck device waits for another; follow the waits from the
	// first until a device repeats: that closes the cycle.
	var path []int
	for d := first; ; {
		if i := slices.Index(path, d); i >= 0 {
			e := &DeadlockError{}
			for _, c := range path[i:] {
				e.Cycle = append(e.Cycle, waits[c])
			}
			return e
		}
		path = append(path, d)
		w, ok := waits[d]
		if !ok {
			// Check rules this out: the device waited for ran to its end,
			// so it posted its end of every transfer and ran every
			// collective.
			return fmt.Errorf("device %d at op %d (%s) waits for device %d, which has finished", waits[path[len(path)-2]].Device,
				waits[path[len(path)-2]].Index, waits[path[len(path)-2]].Op, d)
		}
		d = w.WaitsFor
	}
}
