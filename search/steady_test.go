package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// quick is a search whose solver calls are capped at one resource unit
// and whose refinement is left out: the constructions' and baselines'
// answers, in milliseconds, for tests of what is reported about them.
func quick() Options {
	return Options{Effort: 1, PhaseEffort: 1, RefineEffort: -1}
}

// The steady state reported is the schedule's own. On the m-shape, 8
// devices, memory 8, 128 micro-batches, a list schedule wins: it runs
// every forward shard first, then the stages one forward one backward,
// then every backward shard, each stretch without a bubble, 6 (the
// per-device load) per micro-batch. The repetend the search found (period
// 8, 25% bubbles) is not what it returns.
func TestSteadyStateIsTheSchedules(t *testing.T) {
	p := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 8})
	res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 128, Memory: 8}, quick())
	if err != nil {
		t.Fatal(err)
	}
	st := schedule.SteadyOf(res.Schedule)
	if st == nil {
		t.Fatalf("%s: no steady state", res.Source)
	}
	if st.BubbleRate != 0 || st.Period != 6 || st.PerPeriod != 1 {
		t.Errorf("%s: steady state %+v, want period 6, no bubble", res.Source, st)
	}
	if res.Repetend == nil || res.Repetend.Period == st.Period || res.RepetendUsed() {
		t.Errorf("repetend %+v: want one of another period, not used", res.Repetend)
	}
}

// Property: at large N, q more micro-batches (q the steady state's
// micro-batches per period) add exactly the reported period to the
// makespan, on every built-in shape — where the same construction wins at
// both N (the cases below; at x-shape, 4 devices, memory 4, another wins
// at 129).
func TestSteadyPeriodIsTheMakespansGrowth(t *testing.T) {
	testskip.Short(t, "26 searches")
	const n = 128
	for _, c := range []struct {
		shape           string
		devices, memory int
	}{
		{"v-shape", 4, 4}, {"v-shape", 8, 8},
		{"x-shape", 4, 0}, {"x-shape", 4, 6}, {"x-shape", 8, 8},
		{"m-shape", 4, 6}, {"m-shape", 4, 4}, {"m-shape", 8, 8}, {"m-shape", 8, 0},
		{"nn-shape", 4, 4}, {"nn-shape", 8, 8},
		{"k-shape", 4, 6}, {"k-shape", 8, 8},
	} {
		t.Run(fmt.Sprintf("%s/d=%d/m=%d", c.shape, c.devices, c.memory), func(t *testing.T) {
			p := placementtest.Builtin(t, c.shape, placement.Options{Devices: c.devices})
			res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: c.memory}, quick())
			if err != nil {
				t.Fatal(err)
			}
			st := schedule.SteadyOf(res.Schedule)
			if st == nil {
				t.Fatalf("%s: steady state %+v", res.Source, st)
			}
			more, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n + st.PerPeriod, Memory: c.memory}, quick())
			if err != nil {
				t.Fatal(err)
			}
			if grew := more.Makespan() - res.Makespan(); grew != st.Period {
				t.Errorf("%s → %s: %d more micro-batches add %d, the reported period is %d", res.Source, more.Source, st.PerPeriod, grew, st.Period)
			}
		})
	}
}
