package measure

import (
	"fmt"

	"github.com/tessel-pp/tessel/runtimegen"
)

// Span is an action's start and end, in ms after the iteration's start.
type Span struct {
	Start float64 `json:"start_ms"`
	End   float64 `json:"end_ms"`
}

// Timeline is one iteration of every device: per device, a span per op
// of its program, in order.
type Timeline [][]Span

// End is when the last device finished.
func (t Timeline) End() float64 {
	end := 0.0
	for _, ops := range t {
		for _, s := range ops {
			end = max(end, s.End)
		}
	}
	return end
}

// Busy is the time device d computed: its compute, collective and
// recompute ops.
func (t Timeline) Busy(progs []*runtimegen.Program, d int) float64 {
	busy := 0.0
	for i, o := range progs[d].Ops {
		if computes(o.Kind) {
			busy += t[d][i].End - t[d][i].Start
		}
	}
	return busy
}

func computes(k runtimegen.OpKind) bool {
	return k == runtimegen.Compute || k == runtimegen.Collective || k == runtimegen.Recompute
}

// Predict runs the programs with the costs, all devices from time 0:
// every op starts Overhead after the one before it on its device (or
// after what it waits for); a compute takes its block's time, a recompute
// its forward's; posting a send or a receive, an offload and a reload
// take no more; a transfer starts when both its ends are posted and
// takes Transfer; a wait (and a blocking send or receive) ends when its
// transfer has arrived; a collective starts when every member has
// reached it. The order of evaluation never changes a time (each follows
// from the events it waits for), so the result is deterministic.
func Predict(progs []*runtimegen.Program, c Costs) (Timeline, error) {
	if err := runtimegen.Check(progs); err != nil {
		return nil, fmt.Errorf("programs: %w", err)
	}
	n := len(progs)
	tl := make(Timeline, n)
	pc := make([]int, n)
	clock := make([]float64, n)
	type xfer struct {
		send, recv float64 // post times, -1 until posted
	}
	xs := map[int]*xfer{}
	for _, p := range progs {
		for _, o := range p.Ops {
			if o.Kind == runtimegen.Send {
				xs[o.Tag] = &xfer{-1, -1}
			}
		}
	}
	for d := range progs {
		tl[d] = make([]Span, len(progs[d].Ops))
	}
	arrived := func(x *xfer) (float64, bool) {
		if x.send < 0 || x.recv < 0 {
			return 0, false
		}
		return max(x.send, x.recv) + c.Transfer, true
	}
	cost := func(block string) (float64, error) {
		t, ok := c.Block[block]
		if !ok {
			return 0, fmt.Errorf("no cost for block %q", block)
		}
		return t, nil
	}
	advance := func(d int) (bool, error) {
		if pc[d] >= len(progs[d].Ops) {
			return false, nil
		}
		o := progs[d].Ops[pc[d]]
		start := clock[d] + c.Overhead
		end := start
		blocking := progs[d].Mode == runtimegen.Blocking
		switch o.Kind {
		case runtimegen.Compute, runtimegen.Recompute:
			t, err := cost(o.Block)
			if err != nil {
				return false, err
			}
			end = start + t
		case runtimegen.Collective:
			t, err := cost(o.Block)
			if err != nil {
				return false, err
			}
			members := progs[0].Block(o.Block).Devices
			at := 0.0
			for _, m := range members {
				if pc[m] >= len(progs[m].Ops) {
					return false, nil
				}
				mo := progs[m].Ops[pc[m]]
				if mo.Kind != runtimegen.Collective || mo.Block != o.Block || mo.Micro != o.Micro {
					return false, nil
				}
				at = max(at, clock[m]+c.Overhead)
			}
			for _, m := range members {
				tl[m][pc[m]] = Span{at, at + t}
				clock[m] = at + t
				pc[m]++
			}
			return true, nil
		case runtimegen.Send, runtimegen.Recv:
			x := xs[o.Tag]
			if o.Kind == runtimegen.Send && x.send < 0 {
				x.send = start
			} else if o.Kind == runtimegen.Recv && x.recv < 0 {
				x.recv = start
			}
			if blocking {
				at, ok := arrived(x)
				if !ok {
					return false, nil
				}
				end = max(start, at)
			}
		case runtimegen.Wait:
			at, ok := arrived(xs[o.Tag])
			if !ok {
				return false, nil
			}
			end = max(start, at)
		case runtimegen.Offload, runtimegen.Reload:
		}
		tl[d][pc[d]] = Span{start, end}
		clock[d] = end
		pc[d]++
		return true, nil
	}
	for progress := true; progress; {
		progress = false
		for d := range progs {
			for {
				ok, err := advance(d)
				if err != nil {
					return nil, err
				}
				if !ok {
					break
				}
				progress = true
			}
		}
	}
	for d := range progs {
		if pc[d] < len(progs[d].Ops) {
			return nil, fmt.Errorf("device %d stops at op %d (%s): the programs deadlock", d, pc[d], progs[d].Ops[pc[d]])
		}
	}
	return tl, nil
}
