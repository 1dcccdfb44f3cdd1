package compare

import (
	"context"
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// Fig. 11 and 12 (the Tessel paper's §VI-C) under a latency budget (its
// §VI-D): every point's repetend meets the budget in its steady state,
// so its bubble rate is never below the point's without the budget; the
// tables name the budget; a budget below the critical path is an error
// that is search.ErrLatency.
func TestSweepLatency(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	ps := []*placement.Placement{p}
	opt := SweepOptions{NRs: []int{1, 2, 3}, Memories: []int{8}, Jobs: 1}
	free, err := Sweep(context.Background(), ps, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Latency = 5
	tight, err := Sweep(context.Background(), ps, opt)
	if err != nil {
		t.Fatal(err)
	}
	worse := false
	for k, pt := range tight.Fig11.Points {
		f := free.Fig11.Points[k]
		if pt.BubbleRate == nil || f.BubbleRate == nil {
			t.Fatalf("N_R ≤ %d: no repetend", pt.X)
		}
		if *pt.BubbleRate < *f.BubbleRate {
			t.Errorf("N_R ≤ %d: rate %v under the budget, below %v without it", pt.X, *pt.BubbleRate, *f.BubbleRate)
		}
		worse = worse || *pt.BubbleRate > *f.BubbleRate
		r, err := search.SteadyRepetend(context.Background(), spec.Spec{Placement: p, Latency: 5}, search.SteadyOptions{MaxNR: pt.X, Jobs: 1})
		if err != nil || r.Best == nil {
			t.Fatalf("N_R ≤ %d: %v", pt.X, err)
		}
		if l := r.Best.Latency(p); l > 5 {
			t.Errorf("N_R ≤ %d: steady-state latency %d over the budget 5", pt.X, l)
		}
	}
	if !worse {
		t.Error("the budget changed no point: the test shows nothing")
	}
	if tight.Fig11.LatencyBudget != 5 || tight.Fig12.LatencyBudget != 5 {
		t.Errorf("the figures do not carry the budget: %d, %d", tight.Fig11.LatencyBudget, tight.Fig12.LatencyBudget)
	}
	opt.Latency = 4
	if _, err := Sweep(context.Background(), ps, opt); !errors.Is(err, search.ErrLatency) {
		t.Errorf("budget 4 below the critical path 5: error %v, want search.ErrLatency", err)
	}
}
