package schedule_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// queuedChain is three micro-batches of inference2 (f0 → f1, transfer 3)
// with f1^m at the given starts, f0^m at m.
func queuedChain(p *placement.Placement, budget int, f1 ...int) *schedule.Schedule {
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: len(f1), Latency: budget}}
	for m, at := range f1 {
		s.Instances = append(s.Instances, schedule.Instance{Block: 0, Micro: m, Start: m}, schedule.Instance{Block: 1, Micro: m, Start: at})
	}
	return s
}

// The verifier checks the latency rule and the link rule together: where
// the queue on a link pushes a micro-batch past its budget, it names the
// micro-batch; where a schedule breaks both, it names both. Lin et al.,
// Tessel, §VI-D (the latency budget of an inference service).
func TestVerifyLatencyChannels(t *testing.T) {
	free, queued := inference2(t, 3, false), inference2(t, 3, true)
	for _, tc := range []struct {
		name string
		s    *schedule.Schedule
		want []string // kind: message; none when valid
	}{
		{"without channels, every tensor at once", queuedChain(free, 5, 4, 5, 6), nil},
		{"queued, within the budget", queuedChain(queued, 9, 4, 7, 10), nil},
		{"the queue pushes micro-batches 1 and 2 past the budget", queuedChain(queued, 5, 4, 7, 10), []string{
			"latency: latency of micro-batch 1 is 7 > budget 5: f0^1 starts at 1, f1^1 ends at 8",
			"latency: latency of micro-batch 2 is 9 > budget 5: f0^2 starts at 2, f1^2 ends at 11",
		}},
		{"the queue broken and the budget exceeded", queuedChain(queued, 5, 4, 7, 8), []string{
			"dependency: dependency f0 -> f1 broken for micro-batch 2: f0^2 ends at 3, its transfer waits 4 for link 0->1 and takes 3, f1^2 starts at 8 < 10",
			"latency: latency of micro-batch 1 is 7 > budget 5: f0^1 starts at 1, f1^1 ends at 8",
			"latency: latency of micro-batch 2 is 7 > budget 5: f0^2 starts at 2, f1^2 ends at 9",
		}},
	} {
		err := verify.Schedule(tc.s)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ve *schedule.VerifyError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a VerifyError", tc.name, err)
			continue
		}
		var got []string
		for _, v := range ve.Violations {
			got = append(got, string(v.Kind)+": "+v.Message)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// CompactLatency with channels: the transfers queue in their producers'
// order, and each micro-batch's first block is delayed until the queue
// lets it finish within the budget (f0^m at 3m, its tensor on the link
// from 3m+1, f1^m at 3m+4: latency 5 each, makespan 11 as without the
// budget); orders that meet no budget are an error.
func TestCompactLatencyChannels(t *testing.T) {
	p := inference2(t, 3, true)
	orders := [][]schedule.Ref{{{0, 0}, {0, 1}, {0, 2}}, {{1, 0}, {1, 1}, {1, 2}}}
	insC, err := compact.Compact(spec.Spec{Placement: p, MicroBatches: 3, Latency: 5}, compact.Keep{Orders: orders})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 3, Latency: 5}, Instances: ins}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	want := queuedChain(p, 5, 4, 7, 10)
	want.Instances[2].Start, want.Instances[4].Start = 3, 6
	want.Sort()
	if !slices.Equal(s.Instances, want.Instances) {
		t.Errorf("got %v, want %v", s.Instances, want.Instances)
	}
	// a → b on device 0, b's tensor over the link (2) to c on device 1,
	// in the orders a0 a1 b0 b1: micro-batch 0 takes 6 at least (a1 runs
	// inside it), and micro-batch 1 takes 7 (b1's tensor queues behind
	// b0's), however late its first block starts.
	q := &placement.Placement{Name: "two", Devices: 2, Timing: placement.Timing{QueuedLinks: true}, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
		{ID: "b", Kind: placement.Forward, Devices: []int{0}, Time: 1},
		{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1},
	}, Deps: []placement.Dep{{From: 0, To: 1}, {From: 1, To: 2}}}
	q.Transfers = map[placement.Dep]int{{From: 1, To: 2}: 2}
	o := [][]schedule.Ref{{{0, 0}, {0, 1}, {1, 0}, {1, 1}}, {{2, 0}, {2, 1}}}
	if _, err := compact.Compact(spec.Spec{Placement: q, MicroBatches: 2, Latency: 6}, compact.Keep{Orders: o}); err == nil || !strings.Contains(err.Error(), "meet no latency budget 6") {
		t.Errorf("a0 a1 b0 b1 within latency 6: %v, want an error", err)
	}
	if _, err := compact.Compact(spec.Spec{Placement: q, MicroBatches: 2, Latency: 7}, compact.Keep{Orders: o}); err != nil {
		t.Errorf("within latency 7: %v", err)
	}
}

// Property: with channels, CompactLatency gives a schedule the verifier
// accepts under the budget (or an error), never earlier than Compact;
// where no transfer takes time it is exactly CompactLatency without
// channels (both are the least solution).
func TestCompactLatencyChannelsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	places := []*placement.Placement{
		placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, Inference: true}),
		placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4, Inference: true}),
		placementtest.Builtin(t, "k-shape", placement.Options{Devices: 4, Inference: true}),
		placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4}),
	}
	met := 0
	for _, p := range places {
		for trial := range 30 {
			n := 1 + rng.IntN(5)
			orders := schedule.Orders(randomValid(rng, p, n, 2))
			q := p.Clone()
			q.QueuedLinks = true
			budget := p.CriticalPath() + rng.IntN(6)
			plainC, err := compact.Compact(spec.Spec{Placement: p, MicroBatches: n, Latency: budget}, compact.Keep{Orders: orders})
			if err != nil {
				continue
			}
			plain := plainC.Instances
			zero, err := compact.Compact(spec.Spec{Placement: q, MicroBatches: n, Latency: budget}, compact.Keep{Orders: orders})
			if err != nil || !slices.Equal(zero.Instances, plain) {
				t.Fatalf("%s trial %d: channels without transfers: %v, want the schedule without channels", p.Name, trial, err)
			}
			setTransfers(q, func(int) int { return rng.IntN(4) })
			budget = q.CriticalPath() + rng.IntN(8)
			earlyC, err := compact.Compact(spec.New(q, n), compact.Keep{Orders: orders})
			if err != nil {
				t.Fatal(err)
			}
			early := earlyC.Instances
			insC, err := compact.Compact(spec.Spec{Placement: q, MicroBatches: n, Latency: budget}, compact.Keep{Orders: orders})
			if err != nil {
				continue
			}
			ins := insC.Instances
			met++
			s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: n, Latency: budget}, Instances: ins}
			if err := verify.Schedule(s); err != nil {
				t.Fatalf("%s trial %d: %v", p.Name, trial, err)
			}
			at := map[schedule.Ref]int{}
			for _, in := range early {
				at[in.Ref()] = in.Start
			}
			for _, in := range ins {
				if in.Start < at[in.Ref()] {
					t.Fatalf("%s trial %d: %v earlier than compaction's %d", p.Name, trial, in, at[in.Ref()])
				}
			}
		}
	}
	if met == 0 {
		t.Fatal("no trial met its budget")
	}
	// Several links per pair (lanes): the least of the links' queues.
	c, err := cluster.Load("../testdata/clusters/four-two-links.json")
	if err != nil {
		t.Fatal(err)
	}
	met = 0
	for _, p := range places {
		q, err := c.Apply(p)
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 20 {
			n := 1 + rng.IntN(5)
			orders := schedule.Orders(randomValid(rng, p, n, 2))
			budget := q.CriticalPath() + rng.IntN(12)
			insC, err := compact.Compact(spec.Spec{Placement: q, MicroBatches: n, Latency: budget}, compact.Keep{Orders: orders})
			if err != nil {
				continue
			}
			ins := insC.Instances
			met++
			if err := verify.Schedule(&schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: n, Latency: budget}, Instances: ins}); err != nil {
				t.Fatalf("%s with lanes, trial %d: %v", p.Name, trial, err)
			}
		}
	}
	if met == 0 {
		t.Fatal("with lanes, no trial met its budget")
	}
}
