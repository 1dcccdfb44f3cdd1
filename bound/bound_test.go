package bound

import (
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
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
		if got := LowerBounds(spec.New(p, tt.n)); got.Period != tt.period || got.Makespan != tt.span {
			t.Errorf("LowerBounds(%s, %d, 0) = %+v, want {%d %d}", tt.name, tt.n, got, tt.period, tt.span)
		}
	}
}

// layerChain is stages × layers: every layer's forward (time 1, memory
// +1) down the devices, then every backward (time 2, memory −1) back.
func layerChain(stages, layers int) *placement.Placement {
	p := &placement.Placement{Name: "chain", Devices: stages}
	var chain []int
	for s := range stages {
		for l := range layers {
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("f%d.%d", s, l), Kind: placement.Forward, Devices: []int{s}, Time: 1, Memory: 1})
			chain = append(chain, len(p.Blocks)-1)
		}
	}
	for s := stages - 1; s >= 0; s-- {
		for l := layers - 1; l >= 0; l-- {
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("b%d.%d", s, l), Kind: placement.Backward, Devices: []int{s}, Time: 2, Memory: -1})
			chain = append(chain, len(p.Blocks)-1)
		}
	}
	for k := 1; k < len(chain); k++ {
		p.Deps = append(p.Deps, placement.Dep{From: chain[k-1], To: chain[k]})
	}
	return p
}

// The memory bound, worked by hand for 64 stages × 8 layers, memory 16,
// 8 micro-batches: device 0 holds 8 activations from the start of f0.7
// to the start of b0.7, at least ℓ = 1 + 504 + 1008 = 1513 apart, so two
// micro-batches at a time: 7 (head of f0.7) + ⌈8·1513/2⌉ + 2 (b0.7) +
// 14 (its tail) = 6075, far above the load and path bounds (1704).
func TestLowerBoundsMemory(t *testing.T) {
	p := layerChain(64, 8)
	if got := LowerBounds(spec.New(p, 8)).Makespan; got != 1704 {
		t.Errorf("without a budget: %d, want 1704", got)
	}
	if got := LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: 16}).Makespan; got != 6075 {
		t.Errorf("memory 16: %d, want 6075", got)
	}
	// A budget that holds every micro-batch adds nothing.
	if got := LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: 64}).Makespan; got != 1704 {
		t.Errorf("memory 64: %d, want 1704", got)
	}
	// By names the argument that gives each.
	for _, c := range []struct {
		memory int
		want   MakespanBound
	}{{0, BoundDeviceLoad}, {16, BoundMemory}, {64, BoundDeviceLoad}} {
		if by := LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: c.memory}).By; by != c.want {
			t.Errorf("memory %d: bound by %v, want %v", c.memory, by, c.want)
		}
	}
}

// The bound with the blocks on all devices cut out is named as such: on
// nn-shape, 6 micro-batches, memory 6, it gives 60 (the proven optimum)
// where the critical path and the devices' loads give less.
func TestLowerBoundsByBarriers(t *testing.T) {
	p := placementtest.Builtin(t, "nn-shape", placement.Options{Devices: 4})
	b := LowerBounds(spec.Spec{Placement: p, MicroBatches: 6, Memory: 6})
	by := b.By
	if b.Makespan != 60 || by != BoundBarriers {
		t.Errorf("nn-shape, 6 micro-batches, memory 6: bound %d by %v, want 60 by %v", b.Makespan, by, BoundBarriers)
	}
}
