package bound

import (
	"testing"

	"github.com/tessel-pp/tessel/placement"
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
		by              MakespanBound
	}{
		{4, 7, 12, BoundLatency},
		{6, 7, 15, BoundBarriers},
		{12, 7, 28, BoundLatency},
		{32, 7, 76, BoundLatency},
		{32, 0, 67, BoundBarriers},
		{32, 200, 67, BoundBarriers},
	} {
		b := LowerBounds(spec.Spec{Placement: p, MicroBatches: tc.n, Latency: tc.budget})
		by := b.By
		if b.Makespan != tc.want || by != tc.by {
			t.Errorf("N=%d budget %d: bound %d by %v, want %d by %v", tc.n, tc.budget, b.Makespan, by, tc.want, tc.by)
		}
		if tc.budget == 0 {
			if want := lowerBounds(p, tc.n, 0); b != want || by != want.By {
				t.Errorf("N=%d without a budget: %v %v, lowerBounds %v %v", tc.n, b, by, want, want.By)
			}
		}
	}
}
