package overlap_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/overlap"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// TestPair: greedy pairing shortens 1F1B's steady phase, where each
// device alternates a forward and a backward of two micro-batches, and
// the paired schedule is verified; without the rule nothing changes.
func TestPair(t *testing.T) {
	for _, c := range []struct {
		name  string
		time  string
		wants bool // a shorter schedule
		pairs bool // any pair
	}{
		{"v-shape", "3", false, true},   // F + B = 4, a pair 3: device time saved, 1F1B's order no shorter
		{"v-shape", "4", false, false},  // F + B: pairing saves nothing
		{"v-shape", "0.5x", true, true}, // 2
	} {
		p, err := placement.Builtin(c.name, placement.Options{Devices: 4})
		if err != nil {
			t.Fatal(err)
		}
		s, err := baseline.OneFOneB(spec.New(p, 16))
		if err != nil {
			t.Fatal(err)
		}
		if same, changed := overlap.Pair(context.Background(), s); changed || same != s {
			t.Errorf("%s: paired without a rule", c.name)
		}
		p = p.Clone()
		if p.Overlap, err = placement.ParseOverlapTime(c.time); err != nil {
			t.Fatal(err)
		}
		s, err = baseline.OneFOneB(spec.Spec{Placement: p, MicroBatches: 16, Memory: 4})
		if err != nil {
			t.Fatal(err)
		}
		paired, changed := overlap.Pair(context.Background(), s)
		if err := verify.Schedule(paired); err != nil {
			t.Fatalf("%s --overlap-time %s: %v", c.name, c.time, err)
		}
		if b := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 16, Memory: 4}).Makespan; b > schedule.Makespan(paired) {
			t.Errorf("%s --overlap-time %s: lower bound %d above a paired schedule's makespan %d", c.name, c.time, b, schedule.Makespan(paired))
		}
		shorter := schedule.Makespan(paired) < schedule.Makespan(s)
		if shorter != c.wants || changed != c.pairs || changed != (len(paired.Pairs) > 0) || schedule.Makespan(paired) > schedule.Makespan(s) {
			t.Errorf("%s --overlap-time %s: makespan %d with %d pairs, %d without", c.name, c.time, schedule.Makespan(paired), len(paired.Pairs), schedule.Makespan(s))
		}
	}
}

func TestDualPipeVOverlapNotApplicable(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, SplitBackward: true, Chunks: 2, Order: placement.V})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := baseline.DualPipeVOverlap(spec.New(p, 8)); !errors.Is(err, baseline.ErrNotApplicable) {
		t.Errorf("without --overlap-time: %v", err)
	}
}

// TestBoundsHold: on every placement shape that pairs and every
// construction of the search, paired greedily, the lower bounds that
// count what pairs save stay below the makespan (the relaxation of
// rules.LowerBounds).
func TestBoundsHold(t *testing.T) {
	for _, name := range []string{"v-shape", "m-shape", "k-shape", "x-shape"} {
		for _, split := range []bool{false, true} {
			for _, ot := range []string{"1", "2", "0.6x"} {
				p, err := placement.Builtin(name, placement.Options{Devices: 4, SplitBackward: split})
				if err != nil {
					t.Fatal(err)
				}
				if p.Overlap, err = placement.ParseOverlapTime(ot); err != nil {
					t.Fatal(err)
				}
				for _, n := range []int{1, 6} {
					for _, m := range []int{0, 6} {
						cands, err := construct.Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: m})
						if err != nil {
							t.Fatal(err)
						}
						b := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: m}).Makespan
						for _, c := range cands[:min(len(cands), 6)] {
							paired, _ := overlap.Pair(context.Background(), c.Schedule)
							if err := verify.Schedule(paired); err != nil {
								t.Fatalf("%s --overlap-time %s, N=%d, memory %d, %s: %v", p.Name, ot, n, m, c.Name, err)
							}
							if ms := schedule.Makespan(paired); ms < b {
								t.Errorf("%s --overlap-time %s, N=%d, memory %d, %s paired: makespan %d below the bound %d", p.Name, ot, n, m, c.Name, ms, b)
							}
						}
					}
				}
			}
		}
	}
}
