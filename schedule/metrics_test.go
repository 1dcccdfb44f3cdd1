package schedule_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// 1F1B on a v-shape of D devices, forward f and backward b, N
// micro-batches: makespan (N+D-1)(f+b), every device busy N(f+b), so the
// bubble rate is (D-1)/(N+D-1); device s holds at most min(D-s, N)
// activations.
func TestMeasureOneF1B(t *testing.T) {
	for _, tc := range []struct{ d, n, f, b int }{{4, 4, 1, 3}, {4, 8, 1, 3}, {2, 1, 1, 1}, {8, 16, 2, 3}, {3, 5, 1, 2}} {
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: tc.d, ForwardTime: tc.f, BackwardTime: tc.b})
		s := oneF1B(t, p, tc.n, 0)
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		m := schedule.Measure(s)
		if want := (tc.n + tc.d - 1) * (tc.f + tc.b); m.Makespan != want || schedule.Makespan(s) != want {
			t.Errorf("%+v: makespan %d, want %d", tc, m.Makespan, want)
		}
		if want := float64(tc.d-1) / float64(tc.n+tc.d-1); math.Abs(m.BubbleRate-want) > 1e-12 {
			t.Errorf("%+v: bubble rate %v, want %v", tc, m.BubbleRate, want)
		}
		for d := range tc.d {
			if want := tc.n * (tc.f + tc.b); m.Loads[d] != want {
				t.Errorf("%+v: load of device %d = %d, want %d", tc, d, m.Loads[d], want)
			}
			if want := min(tc.d-d, tc.n); m.PeakMemory[d] != want {
				t.Errorf("%+v: peak memory of device %d = %d, want %d", tc, d, m.PeakMemory[d], want)
			}
		}
	}
}

// A block on g devices is busy on each of them: m-shape's shard blocks
// count on all 4 devices.
func TestMeasureGroupLoads(t *testing.T) {
	p := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4})
	s := greedy(p, 3)
	m := schedule.Measure(s)
	busy := 0
	for d, l := range m.Loads {
		// fs and bs (time 1 each) plus f_d and b_d, per micro-batch.
		if want := 3 * (1 + 1 + 1 + 3); l != want {
			t.Errorf("load of device %d = %d, want %d", d, l, want)
		}
		busy += l
	}
	want := 1 - float64(busy)/float64(4*m.Makespan)
	if math.Abs(m.BubbleRate-want) > 1e-12 {
		t.Errorf("bubble rate %v, want %v", m.BubbleRate, want)
	}
}

// The makespan bound is a lower bound: no valid schedule beats it. Random
// list schedules of every shape, with the bound's head/tail term
// exercised by shapes whose devices start late or end early.
func TestLowerBoundsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		name := placement.BuiltinNames()[trial%len(placement.BuiltinNames())]
		p := placementtest.Builtin(t, name, placement.Options{Devices: 2 + 2*rng.IntN(3), ForwardTime: 1 + rng.IntN(2), BackwardTime: 1 + rng.IntN(4)})
		n := 1 + rng.IntN(6)
		s := randomValid(rng, p, n, rng.IntN(2))
		if rng.IntN(2) == 0 {
			s = greedy(p, n)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		if lb := rules.LowerBounds(spec.New(p, n)); schedule.Makespan(s) < lb.Makespan {
			t.Fatalf("%s D=%d N=%d: makespan %d below the lower bound %d", name, p.Devices, n, schedule.Makespan(s), lb.Makespan)
		}
	}
}

func TestRepetendBubbleRate(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{}) // Σ load = 16
	for _, tc := range []struct {
		period int
		want   float64
	}{{4, 0}, {5, 0.2}, {8, 0.5}, {0, 0}} {
		if got := schedule.RepetendBubbleRate(p, tc.period); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("RepetendBubbleRate(P=%d) = %v, want %v", tc.period, got, tc.want)
		}
	}
}

func TestMeasureEmpty(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	m := schedule.Measure(&schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}})
	if m.Makespan != 0 || m.BubbleRate != 0 || !slices.Equal(m.PeakMemory, []int{0, 0}) {
		t.Errorf("Measure of no instances = %+v", m)
	}
	if got := schedule.Measure(nil); got.Makespan != 0 || got.PeakMemory != nil {
		t.Errorf("Measure(nil) = %+v", got)
	}
}
