package overlap_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/overlap"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
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
		s, err := baseline.OneFOneB(p, 16, 0)
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
		s, err = baseline.OneFOneB(p, 16, 4)
		if err != nil {
			t.Fatal(err)
		}
		paired, changed := overlap.Pair(context.Background(), s)
		if err := schedule.Verify(paired); err != nil {
			t.Fatalf("%s --overlap-time %s: %v", c.name, c.time, err)
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
	if _, err := baseline.DualPipeVOverlap(p, 8, 0); !errors.Is(err, baseline.ErrNotApplicable) {
		t.Errorf("without --overlap-time: %v", err)
	}
}
