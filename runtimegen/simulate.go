package runtimegen

import (
	"fmt"
	"slices"
	"strings"
)

// Result is what a simulated run of a set of programs achieved.
type Result struct {
	Mode       Mode
	CommTime   int   // per transfer
	Transfers  int   // tensors that crossed devices
	Makespan   int   // when the last device finished its program
	Busy       []int // per device: time spent computing
	Idle       []int // per device: Makespan − Busy
	BubbleRate float64
}

// Simulate runs the programs (checked first with Check) event by event:
// a compute takes its block's time on its device; a collective starts when
// every member of its group has reached it and takes the block's time on
// all of them; a transfer starts when both its send and its receive are
// posted and takes commTime; a blocking send or receive returns when its
// transfer is over (rendezvous), a posted one at once, and a wait returns
// when its transfer is over. Devices run as soon as they can, without
// looking at the schedule's start times.
//
// Each operation is an event whose time follows from the events it waits
// for, and no two transfers compete for a link, so the order in which the
// simulator evaluates events never changes a time: the result is
// deterministic. When devices wait for each other in a cycle the result is
// a *DeadlockError naming the cycle.
func Simulate(progs []*Program, commTime int) (*Result, error) {
	if commTime < 0 {
		return nil, fmt.Errorf("communication time %d is negative", commTime)
	}
	if err := Check(progs); err != nil {
		return nil, fmt.Errorf("programs: %w", err)
	}
	sim := newSim(progs, commTime)
	for sim.step() {
	}
	if err := sim.stuck(); err != nil {
		return nil, err
	}
	r := &Result{Mode: progs[0].Mode, CommTime: commTime, Transfers: len(sim.xfer), Busy: sim.busy, Idle: make([]int, len(progs))}
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
}

func (x xfer) posted() bool { return x.sendAt >= 0 && x.recvAt >= 0 }

type sim struct {
	progs  []*Program
	comm   int
	times  map[string]int
	groups map[string][]int
	pc     []int
	clock  []int // when the device finished its last op
	busy   []int
	posted []bool // the op at pc is a blocking send/recv already posted
	xfer   map[int]*xfer
}

func newSim(progs []*Program, comm int) *sim {
	s := &sim{progs: progs, comm: comm, times: map[string]int{}, groups: map[string][]int{}, xfer: map[int]*xfer{}}
	for _, b := range progs[0].Blocks {
		s.times[b.ID] = b.Time
		s.groups[b.ID] = b.Devices
	}
	n := len(progs)
	s.pc, s.clock, s.busy, s.posted = make([]int, n), make([]int, n), make([]int, n), make([]bool, n)
	for _, p := range progs {
		for _, o := range p.Ops {
			if o.Kind == Send || o.Kind == Recv {
				s.xfer[o.Tag] = &xfer{-1, -1}
			}
		}
	}
	return s
}

func (s *sim) op(d int) (Op, bool) {
	if s.pc[d] >= len(s.progs[d].Ops) {
		return Op{}, false
	}
	return s.progs[d].Ops[s.pc[d]], true
}

func (s *sim) done(x *xfer) int { return max(x.sendAt, x.recvAt) + s.comm }

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
	switch o.Kind {
	case Compute:
		t := s.times[o.Block]
		s.clock[d] += t
		s.busy[d] += t
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
		}
		if blocking {
			if !x.posted() {
				return false
			}
			s.clock[d] = s.done(x)
		}
		s.posted[d] = false
	case Wait:
		x := s.xfer[o.Tag]
		if !x.posted() {
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
