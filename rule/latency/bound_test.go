package latency_test

import (
	"testing"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/latency"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
)

// The latency budget's bound on the inference m-shape (the Tessel
// paper's Fig. 8 m-shape, forward only, as in its §VI-D inference study)
// at budget 7: three micro-batches per window of 7, against the optima
// the time-optimal search proves (N=4: 12, N=6: 16, N=12: 30); without a
// budget, or with one that admits every barrier in one window, the
// bounds are those without a budget.
func TestLowerBoundsLatency(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n, budget, want int
		by              bound.MakespanBound
	}{
		{4, 7, 12, latency.By},
		{6, 7, 15, bound.BoundBarriers},
		{12, 7, 28, latency.By},
		{32, 7, 76, latency.By},
		{32, 0, 67, bound.BoundBarriers},
		{32, 200, 67, bound.BoundBarriers},
	} {
		b := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: tc.n, Latency: tc.budget})
		by := b.By
		if b.Makespan != tc.want || by != tc.by {
			t.Errorf("N=%d budget %d: bound %d by %v, want %d by %v", tc.n, tc.budget, b.Makespan, by, tc.want, tc.by)
		}
		if tc.budget == 0 {
			// The rule is off: the bounds are the spec's own arguments.
			if want := bound.Of(spec.New(p, tc.n), nil); b != want {
				t.Errorf("N=%d without a budget: %v, without the rules %v", tc.n, b, want)
			}
		}
	}
}
