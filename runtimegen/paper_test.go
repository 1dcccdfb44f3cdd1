package runtimegen

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Tests that pin claims of the paper's §IV-D (runtime), each citing its
// source.

// Reference: §IV-D, "the mis-ordering of send and receive pairs can lead
// to deadlocks": two chains that cross (x-shape on two devices) start
// together; each device sends its first output before receiving the
// other's, and both blocking sends wait for a receive that never comes.
// The global order sends on one device while the other receives.
func TestNaiveOrderDeadlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		d, n int
	}{{"x-shape", 2, 1}, {"x-shape", 4, 4}, {"k-shape", 4, 4}} {
		t.Run(fmt.Sprintf("%s/D=%d/N=%d", tc.name, tc.d, tc.n), func(t *testing.T) {
			s := greedy(t, builtin(t, tc.name, tc.d, false), tc.n)
			_, err := Simulate(naive(t, s), 1)
			var dl *DeadlockError
			if !errors.As(err, &dl) {
				t.Fatalf("naive order: got %v, want a deadlock", err)
			}
			if len(dl.Cycle) < 2 {
				t.Fatalf("cycle %v: want at least two devices", dl.Cycle)
			}
			for i, w := range dl.Cycle {
				next := dl.Cycle[(i+1)%len(dl.Cycle)]
				if w.WaitsFor != next.Device {
					t.Errorf("cycle %v: device %d waits for %d, not the next device %d", dl.Cycle, w.Device, w.WaitsFor, next.Device)
				}
				if !w.Op.IsComm() && w.Op.Kind != Collective {
					t.Errorf("device %d stuck at %s, which cannot block", w.Device, w.Op)
				}
			}
			msg := err.Error()
			for _, w := range dl.Cycle {
				if !strings.Contains(msg, w.Op.String()) {
					t.Errorf("message %q does not name op %s", msg, w.Op)
				}
			}
			for _, mode := range Modes() {
				simulate(t, generate(t, s, mode), 1)
			}
		})
	}
}

// Reference: Fig. 7. Device 0 produces a tensor for device 1 and has more
// work of its own; device 1 is busy when the tensor is ready. Blocking, the
// send holds device 0 until device 1 receives; non-blocking, device 0 goes
// on and the transfer overlaps both devices' work.
func TestFig7Overlap(t *testing.T) {
	p := &placement.Placement{Name: "fig7", Devices: 2, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1, Memory: 0},
		{ID: "x", Kind: placement.Forward, Devices: []int{1}, Time: 3, Memory: 0},
		{ID: "b", Kind: placement.Forward, Devices: []int{0}, Time: 3, Memory: 0},
		{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1, Memory: 0},
	}, Deps: []placement.Dep{{From: 0, To: 3}, {From: 0, To: 2}, {From: 1, To: 3}}}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Instances: []schedule.Instance{
		{Block: 1, Micro: 0, Start: 0}, {Block: 0, Micro: 0, Start: 1},
		{Block: 2, Micro: 0, Start: 2}, {Block: 3, Micro: 0, Start: 3}}}
	// x comes first in the global order. Blocking: device 0 runs a at 0
	// and sends at 1, device 1 receives after x, at 3: the transfer ends at
	// 3+1 and b runs 4..7. Non-blocking: device 1 posted the receive before
	// x, the tensor arrives at 2, b runs 1..4 and c 3..4.
	for _, tc := range []struct {
		mode Mode
		want int
	}{{Blocking, 7}, {NonBlocking, 4}} {
		r := simulate(t, generate(t, s, tc.mode), 1)
		if r.Makespan != tc.want {
			t.Errorf("%s: makespan %d, want %d", tc.mode, r.Makespan, tc.want)
		}
	}
}

// Reference: §IV-D and Fig. 17: non-blocking communication speeds up
// training of GPT (m-shape) and mT5 (nn-shape) — up to 1.9× in the paper —
// because their shard blocks make devices wait for each other's transfers.
// Here on 4 devices, 8 micro-batches and a communication time of 1.
func TestFig17NonBlockingFaster(t *testing.T) {
	for _, name := range []string{"m-shape", "nn-shape"} {
		s := greedy(t, builtin(t, name, 4, false), 8)
		nb := simulate(t, generate(t, s, NonBlocking), 1)
		bl := simulate(t, generate(t, s, Blocking), 1)
		if nb.Makespan >= bl.Makespan {
			t.Errorf("%s: non-blocking makespan %d, blocking %d: want faster", name, nb.Makespan, bl.Makespan)
		}
		t.Logf("%s: blocking %d, non-blocking %d: %.2f×", name, bl.Makespan, nb.Makespan, float64(bl.Makespan)/float64(nb.Makespan))
	}
}

// Overlapping never hurts on the built-in shapes: non-blocking programs
// are never slower than blocking ones, whatever the communication time.
func TestNonBlockingNeverSlower(t *testing.T) {
	for _, c := range allBuiltins(t, 4) {
		s := greedy(t, c.p, 6)
		nbp, blp := generate(t, s, NonBlocking), generate(t, s, Blocking)
		for _, comm := range []int{0, 1, 3} {
			nb, bl := simulate(t, nbp, comm), simulate(t, blp, comm)
			if nb.Makespan > bl.Makespan {
				t.Errorf("%s comm %d: non-blocking %d, blocking %d", c.label, comm, nb.Makespan, bl.Makespan)
			}
		}
	}
}
