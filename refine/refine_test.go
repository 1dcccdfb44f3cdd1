package refine

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// zeroBubbleV is the V placement of ZB-V with the backward split: stages
// 0..D−1 down devices 0..D−1, stages D..2D−1 back up, F, I, W of time 1
// and memory +1, 0, −1.
func zeroBubbleV(t testing.TB, d int) *placement.Placement {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: d, SplitBackward: true, Chunks: 2, Order: placement.V})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// On the ZB-V placement (4 devices, 8 micro-batches, memory 8) the best
// list schedule ends at 57; re-optimising its ends reaches 51, the lower
// bound, which hand-written zero-bubble schedules reach too. Reference:
// Qi et al., Zero Bubble Pipeline Parallelism, ZB-V.
func TestImproveReachesTheBoundOnZBV(t *testing.T) {
	p := zeroBubbleV(t, 4)
	s, err := construct.List(p, 8, construct.ListOptions{Rule: construct.GradientFirst, Window: 6, Memory: 8})
	if err != nil {
		t.Fatal(err)
	}
	before := schedule.Makespan(s)
	got, st, err := Improve(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: 8}).Makespan
	if schedule.Makespan(got) != lb {
		t.Errorf("makespan %d → %d, want the lower bound %d (%+v)", before, schedule.Makespan(got), lb, st)
	}
	if err := verify.Schedule(got); err != nil {
		t.Fatal(err)
	}
}

// Property: on random placements and budgets, Improve returns a valid
// schedule that is never longer than the one it was given, and the
// same one on every run.
func TestImproveNeverWorse(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	shapes := placement.BuiltinNames()
	cases := 12
	if testing.Short() {
		cases = 4
	}
	for c := range cases {
		name := shapes[rng.Intn(len(shapes))]
		d := []int{2, 4}[rng.Intn(2)]
		p, err := placement.Builtin(name, placement.Options{Devices: d, BackwardTime: 1 + rng.Intn(3)})
		if err != nil {
			t.Fatal(err)
		}
		n := 2 + rng.Intn(6)
		mem := []int{0, 2 * d, 3 * d}[rng.Intn(3)]
		rule := construct.Rules()[rng.Intn(len(construct.Rules()))]
		s, err := construct.List(p, n, construct.ListOptions{Rule: rule, Memory: mem})
		if err != nil {
			continue
		}
		opt := Options{Windows: []int{8 + rng.Intn(24)}, Effort: 200_000}
		got, _, err := Improve(context.Background(), s, opt)
		if err != nil {
			t.Fatalf("case %d %s: %v", c, name, err)
		}
		if err := verify.Schedule(got); err != nil {
			t.Fatalf("case %d %s: %v", c, name, err)
		}
		if schedule.Makespan(got) > schedule.Makespan(s) {
			t.Errorf("case %d %s: makespan %d → %d", c, name, schedule.Makespan(s), schedule.Makespan(got))
		}
		again, _, _ := Improve(context.Background(), s, opt)
		if fmt.Sprint(again.Instances) != fmt.Sprint(got.Instances) {
			t.Errorf("case %d %s: two runs differ", c, name)
		}
	}
}

// A cancelled context returns the schedule as it is, at once.
func TestImproveStopsWhenCancelled(t *testing.T) {
	p := zeroBubbleV(t, 4)
	s, err := construct.List(p, 8, construct.ListOptions{Rule: construct.GradientFirst, Memory: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, _, err := Improve(ctx, s, Options{})
	if err != nil || got != s {
		t.Errorf("cancelled: %v, same schedule %v", err, got == s)
	}
}

// With channels, a tail window that frees every instance is the whole
// time-optimal problem with its links (encode.InstanceProblem's transfers),
// so Improve reaches smt.Optimal's proven makespan from a list schedule.
// Partial windows keep their fixed part's transfers exact (or step's own
// check that the current schedule fits its window fails), and never make
// the schedule worse.
func TestImproveWithChannels(t *testing.T) {
	for _, tc := range []struct {
		shape   string
		devices int
		c, n    int
	}{{"v-shape", 4, 5, 4}, {"m-shape", 4, 5, 4}, {"x-shape", 2, 3, 4}} {
		p := placementtest.WithTransfers(mustPlacement(t, tc.shape, tc.devices), tc.c, true)
		s, err := construct.List(p, tc.n, construct.ListOptions{Rule: construct.Rules()[0], Memory: 6})
		if err != nil {
			t.Fatal(err)
		}
		sol, err := smt.MinimizeMakespan(context.Background(), encode.InstanceProblem(spec.Spec{Placement: p, Memory: 6}, encode.AllInstances(spec.New(p, tc.n)), nil), smt.Options{LoadCuts: true})
		if err != nil || !sol.Proven {
			t.Fatalf("%s: optimum %v (proven %v)", tc.shape, err, sol != nil && sol.Proven)
		}
		for _, w := range []int{len(s.Instances), 12, 20} {
			got, st, err := Improve(context.Background(), s, Options{Windows: []int{w}, Effort: 2_000_000})
			if err != nil {
				t.Fatalf("%s window %d: %v", tc.shape, w, err)
			}
			if err := verify.Schedule(got); err != nil {
				t.Fatalf("%s window %d: %v", tc.shape, w, err)
			}
			mk := schedule.Makespan(got)
			if mk > schedule.Makespan(s) || mk < sol.Makespan {
				t.Errorf("%s window %d: makespan %d → %d, optimum %d", tc.shape, w, schedule.Makespan(s), mk, sol.Makespan)
			}
			t.Logf("%s window %d: %d -> %d, optimum %d", tc.shape, w, schedule.Makespan(s), mk, sol.Makespan)
			if w == len(s.Instances) && mk != sol.Makespan {
				t.Errorf("%s, every instance free: makespan %d → %d (%+v), optimum %d", tc.shape, schedule.Makespan(s), mk, st, sol.Makespan)
			}
		}
	}
}

func mustPlacement(t *testing.T, name string, devices int) *placement.Placement {
	t.Helper()
	return placementtest.Builtin(t, name, placement.Options{Devices: devices})
}
