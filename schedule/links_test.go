package schedule_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// inference2 is the forward chain f0 → f1 on two devices with every
// transfer taking c, and channels as asked.
func inference2(t *testing.T, c int, channels bool) *placement.Placement {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, Inference: true})
	setTransfers(p, func(int) int { return c })
	p.QueuedLinks = channels
	return p
}

// With channels the verifier times transfers by the link queue: forwards
// one unit apart whose tensors take 3 cannot all arrive 3 after their
// producers, and the message names the link and the wait.
func TestVerifyChannels(t *testing.T) {
	const n = 3
	free := inference2(t, 3, false)
	insC, err := compact.Compact(spec.New(free, n), compact.Keep{Orders: [][]schedule.Ref{{{0, 0}, {0, 1}, {0, 2}}, {{1, 0}, {1, 1}, {1, 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	// f1^m starts at m + 4: each tensor arrives 3 after its producer ends.
	s := &schedule.Schedule{Spec: spec.Spec{Placement: free, MicroBatches: n}, Instances: ins}
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("without channels: %v", err)
	}
	queued := *s
	queued.Placement = inference2(t, 3, true)
	err = verify.Schedule(&queued)
	var ve *schedule.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("with channels: %v, want a VerifyError", err)
	}
	want := []string{
		// f0^1 ends at 2; link 0->1 carries f0^0's tensor until 4.
		"dependency f0 -> f1 broken for micro-batch 1: f0^1 ends at 2, its transfer waits 2 for link 0->1 and takes 3, f1^1 starts at 5 < 7",
		"dependency f0 -> f1 broken for micro-batch 2: f0^2 ends at 3, its transfer waits 4 for link 0->1 and takes 3, f1^2 starts at 6 < 10",
	}
	if ve.Count() != len(want) {
		t.Fatalf("%d violations, want %d: %v", ve.Count(), len(want), err)
	}
	for x, v := range ve.Violations {
		if v.Kind != schedule.Dependency || v.Message != want[x] {
			t.Errorf("violation %d: %s %q, want dependency %q", x, v.Kind, v.Message, want[x])
		}
	}
	// Compaction applies the same rule: f1^m at 4, 7, 10.
	insC, err = compact.Compact(spec.New(queued.Placement, n), compact.Keep{Orders: schedule.Orders(s)})
	if err != nil {
		t.Fatal(err)
	}
	ins = insC.Instances
	fixed := &schedule.Schedule{Spec: spec.Spec{Placement: queued.Placement, MicroBatches: n}, Instances: ins}
	if err := verify.Schedule(fixed); err != nil {
		t.Fatalf("compacted with channels: %v", err)
	}
	if got := schedule.Makespan(fixed); got != 11 {
		t.Errorf("compacted with channels: makespan %d, want 11 (f1^2 at 10)", got)
	}
	if b := rules.LowerBounds(spec.New(queued.Placement, n)); b.Makespan != 11 || b.Period != 3 {
		t.Errorf("bounds with channels %+v, want makespan 11 (f0 ends at 1, three transfers of 3, f1 takes 1) and period 3", b)
	}
}

// Channels change nothing where no transfer takes time, and compaction
// under them always gives a schedule the verifier accepts, no shorter than
// the lower bound, however the transfers queue (random orders, random
// transfer times, group blocks included).
func TestChannelsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	places := []*placement.Placement{
		placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}),
		placementtest.Builtin(t, "x-shape", placement.Options{Devices: 4}),
		placementtest.Builtin(t, "nn-shape", placement.Options{Devices: 4}),
		placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4}),
	}
	for _, p := range places {
		for trial := range 20 {
			n := 1 + rng.IntN(6)
			s := randomValid(rng, p, n, 2)
			orders := schedule.Orders(s)
			q := p.Clone()
			q.QueuedLinks = true
			zeroC, err := compact.Compact(spec.New(q, n), compact.Keep{Orders: orders})
			if err != nil {
				t.Fatal(err)
			}
			zero := zeroC.Instances
			plainC, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: orders})
			if err != nil {
				t.Fatal(err)
			}
			plain := plainC.Instances
			if schedule.Makespan(&schedule.Schedule{Spec: spec.Spec{Placement: q}, Instances: zero}) != schedule.Makespan(&schedule.Schedule{Spec: spec.Spec{Placement: p}, Instances: plain}) {
				t.Fatalf("%s trial %d: channels without transfers changed the compacted schedule", p.Name, trial)
			}
			setTransfers(q, func(int) int { return rng.IntN(4) })
			insC, err := compact.Compact(spec.New(q, n), compact.Keep{Orders: orders})
			if err != nil {
				t.Fatal(err)
			}
			ins := insC.Instances
			out := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: n}, Instances: ins}
			if err := verify.Schedule(out); err != nil {
				t.Fatalf("%s trial %d: compacted under channels: %v", p.Name, trial, err)
			}
			if lb := rules.LowerBounds(spec.New(q, n)).Makespan; schedule.Makespan(out) < lb {
				t.Fatalf("%s trial %d: makespan %d below the lower bound %d", p.Name, trial, schedule.Makespan(out), lb)
			}
		}
	}
}
