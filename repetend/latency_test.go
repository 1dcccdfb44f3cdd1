package repetend

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// TestSearchLatency: the repetend's cross-iteration latency rule (the
// steady state of the Tessel paper's §IV under the latency budget of its
// §VI-D): with a budget the least period found meets it, by both methods,
// and it is no shorter than the least period without one.
func TestSearchLatency(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	free, err := Search(context.Background(), spec.Spec{Placement: p}, Options{MaxNR: 4, Strategy: StrategyJoint})
	if err != nil || free.Best == nil {
		t.Fatal(err)
	}
	if free.Best.Latency(p) <= 6 {
		t.Fatalf("without a budget the steady latency is %d: the test needs one over 6", free.Best.Latency(p))
	}
	for _, m := range []Strategy{StrategyJoint, StrategyEnumerate} {
		r, err := Search(context.Background(), spec.Spec{Placement: p, Latency: 6}, Options{MaxNR: 4, Strategy: m, Jobs: 1})
		if err != nil || r.Best == nil {
			t.Fatalf("%s: %v", m, err)
		}
		if got := r.Best.Latency(p); got > 6 {
			t.Errorf("%s: steady latency %d > 6 (period %d)", m, got, r.Best.Period)
		}
		if r.Best.Period < free.Best.Period {
			t.Errorf("%s: period %d under the budget < %d without", m, r.Best.Period, free.Best.Period)
		}
		t.Logf("%s: period %d (without budget %d, latency %d)", m, r.Best.Period, free.Best.Period, free.Best.Latency(p))
	}
}
