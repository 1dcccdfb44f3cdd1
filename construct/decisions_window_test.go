package construct

import (
	"context"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

func TestDecisionWindow(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	both := spec.Decisions{Offload: true, Recompute: true}
	for _, c := range []struct {
		n, memory int
		allowed   spec.Decisions
		want      int
	}{
		{256, 4, both, 0}, // built whole
		{300, 0, both, 0}, // no budget: nothing to decide
		{300, 4, spec.Decisions{}, 0},
		{300, 4, both, 48},   // 300 − 48 = 252, a multiple of 12
		{10000, 4, both, 52}, // 9,952 mod 12 = 4
		{2000, 4, spec.Decisions{Recompute: true}, 56},
	} {
		if got := DecisionWindow(spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory, Allowed: c.allowed}); got != c.want {
			t.Errorf("DecisionWindow(N=%d, memory %d, %+v) = %d, want %d", c.n, c.memory, c.allowed, got, c.want)
		}
	}
}

// TestWindowPortfolio: beyond decisionFrom micro-batches the portfolio
// that decides is built on a window and carried to N; every schedule it
// returns is of N micro-batches and verifies, and the best is as short
// as the best of the portfolio built on all N micro-batches.
func TestWindowPortfolio(t *testing.T) {
	testskip.Short(t, "builds the portfolio on 300 micro-batches")
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}).WithOffload(1).WithRecompute()
	sp := spec.Spec{Placement: p, MicroBatches: 300, Memory: 3, Allowed: spec.Decisions{Offload: true, Recompute: true}}
	w := DecisionWindow(sp)
	got, err := Portfolio(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no schedule")
	}
	carried := 0
	for _, e := range got {
		if e.Schedule.MicroBatches != sp.MicroBatches {
			t.Errorf("%s: %d micro-batches, want %d", e.Name, e.Schedule.MicroBatches, sp.MicroBatches)
		}
		if err := verify.Schedule(e.Schedule); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		if e.Periodic == nil {
			carried++
		}
		if strings.HasSuffix(e.Name, "/repeated from 48") && w != 48 {
			t.Errorf("%s: window %d", e.Name, w)
		}
	}
	if carried == 0 || carried > decisionKeep {
		t.Errorf("%d schedules that decide carried to N, want 1 to %d", carried, decisionKeep)
	}
	whole, err := portfolio(context.Background(), p, sp.MicroBatches, sp.Memory, sp.Allowed)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Makespan > whole[0].Makespan {
		t.Errorf("window's best %s ends at %d, after the whole portfolio's best %s (%d)", got[0].Name, got[0].Makespan, whole[0].Name, whole[0].Makespan)
	}
	t.Logf("window %d: %s %d; whole: %s %d", w, got[0].Name, got[0].Makespan, whole[0].Name, whole[0].Makespan)
}
