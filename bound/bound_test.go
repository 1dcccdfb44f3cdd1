package bound_test

import (
	"testing"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
)

func TestLowerBounds(t *testing.T) {
	tests := []struct {
		name   string
		opt    placement.Options
		n      int
		period int
		span   int
	}{
		// v-shape(4), f=1, b=3: load 4 everywhere, critical path 16. Device
		// 3 runs f3 (head 3) first at the earliest and b3 (tail 9) last at
		// the latest: 3 + 4N + 9, which 1F1B reaches ((N+3)·4).
		{"v-shape", placement.Options{}, 1, 4, 16},
		{"v-shape", placement.Options{}, 8, 4, 44},
		// No micro-batches, no makespan.
		{"v-shape", placement.Options{}, 0, 4, 0},
		// m-shape(4): load 6 per device (fs, f_d, b_d, bs); device 3:
		// min head 0 (fs), min tail 0 (bs) gives only 24. With fs and bs
		// (on all devices) cut out (barrierBound): device 3 runs f3
		// (head 3) and b3 (tail 9) 4 times each: 3 + 16 + 9 + 4·2 = 36,
		// the time-optimal makespan the public Python Tessel finds
		// (Lin et al. §III-B).
		{"m-shape", placement.Options{}, 4, 6, 36},
		// critical path 18 beats 1·6.
		{"m-shape", placement.Options{}, 1, 6, 18},
	}
	for _, tt := range tests {
		p := placementtest.Builtin(t, tt.name, tt.opt)
		if got := rules.LowerBounds(spec.New(p, tt.n)); got.Period != tt.period || got.Makespan != tt.span {
			t.Errorf("LowerBounds(%s, %d, 0) = %+v, want {%d %d}", tt.name, tt.n, got, tt.period, tt.span)
		}
	}
}

// The bound with the blocks on all devices cut out is named as such: on
// nn-shape, 6 micro-batches, memory 6, it gives 60 (the proven optimum)
// where the critical path and the devices' loads give less.
func TestLowerBoundsByBarriers(t *testing.T) {
	p := placementtest.Builtin(t, "nn-shape", placement.Options{Devices: 4})
	b := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 6, Memory: 6})
	by := b.By
	if b.Makespan != 60 || by != bound.BoundBarriers {
		t.Errorf("nn-shape, 6 micro-batches, memory 6: bound %d by %v, want 60 by %v", b.Makespan, by, bound.BoundBarriers)
	}
}
