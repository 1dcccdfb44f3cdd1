package memory_test

import (
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
)

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
	if got := rules.LowerBounds(spec.New(p, 8)).Makespan; got != 1704 {
		t.Errorf("without a budget: %d, want 1704", got)
	}
	if got := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: 16}).Makespan; got != 6075 {
		t.Errorf("memory 16: %d, want 6075", got)
	}
	// A budget that holds every micro-batch adds nothing.
	if got := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: 64}).Makespan; got != 1704 {
		t.Errorf("memory 64: %d, want 1704", got)
	}
	// By names the argument that gives each.
	for _, c := range []struct {
		memory int
		want   bound.MakespanBound
	}{{0, bound.BoundDeviceLoad}, {16, memory.By}, {64, bound.BoundDeviceLoad}} {
		if by := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: c.memory}).By; by != c.want {
			t.Errorf("memory %d: bound by %v, want %v", c.memory, by, c.want)
		}
	}
}
