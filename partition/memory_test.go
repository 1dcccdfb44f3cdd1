package partition

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

func dpPlacement(t *testing.T, g *Graph) (*Split, *Converted) {
	t.Helper()
	r, err := Contiguous(context.Background(), g, DPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ToPlacement(r.Split, PlacementOptions{Name: g.Name})
	if err != nil {
		t.Fatal(err)
	}
	return r.Split, c
}

// The GPT-7B profile in bytes (GPT-3 6.7B's shape: 32 layers of width
// 4096, sequence 2048, micro-batch 8, bf16 with Adam: 16 bytes per
// parameter; activations 34·s·b·h per layer, Korthikanti et al.,
// "Reducing Activation Recomputation in Large Transformer Models", with
// FlashAttention) on 80 GB devices: each device keeps its stages'
// parameters, gradients and optimizer state for good, and the rest, in
// units of 512 MiB, is the schedule's budget.
func TestMemoryBudgetsGPT7B(t *testing.T) {
	g := loadModel(t, "gpt-7b-bytes.json")
	if !g.Bytes || g.Memory != 80e9 || g.HostBandwidth != 5e7 {
		t.Fatalf("bytes %v, memory %v, host bandwidth %v", g.Bytes, g.Memory, g.HostBandwidth)
	}
	s, c := dpPlacement(t, g)
	if c.MemoryUnit != 1<<29 {
		t.Errorf("memory unit %v, want 512 MiB", c.MemoryUnit)
	}
	mem, err := c.Memory(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{94, 100, 100, 94}
	for d, m := range mem {
		if m.Budget != want[d] {
			t.Errorf("device %d: budget %d, want %d (%+v)", d, m.Budget, want[d], m)
		}
		if got := m.Capacity - m.Static; got != m.Free {
			t.Errorf("device %d: free %v, want capacity − static %v", d, m.Free, got)
		}
		if float64(m.Budget)*m.Unit > m.Free {
			t.Errorf("device %d: budget %d units of %v exceed the free %v", d, m.Budget, m.Unit, m.Free)
		}
	}
	// Every forward block may be recomputed (keeping its checkpoint) and
	// offloaded (its activation over the host bandwidth, in time steps).
	p := c.Placement
	for i, b := range p.Blocks {
		if b.Kind != "forward" {
			continue
		}
		if !b.Recompute || b.Checkpoint < 1 || b.Checkpoint >= b.Memory || b.Offload < 1 {
			t.Errorf("block %s: recompute %v, checkpoint %d of memory %d, offload %d", b.ID, b.Recompute, b.Checkpoint, b.Memory, b.Offload)
		}
		if want := c.Activation[i] / g.HostBandwidth / c.TimeUnit; float64(b.Offload) < want-1 || float64(b.Offload) > want+1 {
			t.Errorf("block %s: offload %d steps, want about %.1f", b.ID, b.Offload, want)
		}
	}
}

// A device whose stages leave less than one micro-batch's activation
// cannot run under any schedule, even offloading or recomputing
// everything; the error names it. Parameters alone over the capacity say
// so too.
func TestMemoryNoFit(t *testing.T) {
	g := loadModel(t, "gpt-7b-bytes.json")
	s, c := dpPlacement(t, g)
	for _, tc := range []struct {
		capacity float64
		want     string
	}{
		{40e9, "device 0 cannot run its stages even with offload and recompute: parameters, gradients and optimizer state take 29.20 GB of its 40.00 GB, and the 10.80 GB left are less than one micro-batch's activation of 18.45 GB"},
		{20e9, "device 0 cannot hold its stages: their parameters, gradients and optimizer state take 29.20 GB of its 20.00 GB"},
	} {
		caps := []float64{tc.capacity, tc.capacity, tc.capacity, tc.capacity}
		_, err := c.Memory(s, caps)
		var nf *NoFitError
		if !errors.As(err, &nf) || err.Error() != tc.want {
			t.Errorf("capacity %v: %v, want %q", tc.capacity, err, tc.want)
		}
	}
	// One device larger than the others: device 0 alone fits.
	if _, err := c.Memory(s, []float64{80e9, 40e9, 80e9, 80e9}); err == nil || !strings.HasPrefix(err.Error(), "device 1 ") {
		t.Errorf("got %v, want device 1 named", err)
	}
}

// A profile in the model's own units (gpt-like: "memory" 24, "params" and
// "activations") keeps the Tessel paper's convention, one unit per forward
// block, and its budget counts micro-batches of each device's stage:
// ⌊(24 − params) / activations⌋.
func TestMemoryBudgetsInModelUnits(t *testing.T) {
	g := loadModel(t, "gpt-like.json")
	s, c := dpPlacement(t, g)
	mem, err := c.Memory(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{12, 6, 4, 3} // stages: embed; block1-3; block4-7; block8-10, head
	for d, m := range mem {
		if m.Budget != want[d] {
			t.Errorf("device %d: budget %d, want %d (%+v)", d, m.Budget, want[d], m)
		}
	}
	for _, b := range c.Placement.Blocks {
		if b.Recompute || b.Offload != 0 {
			t.Errorf("block %s declares offload or recompute without bytes", b.ID)
		}
	}
	// Without a cap there is nothing to budget.
	g.Memory = 0
	if mem, err := c.Memory(s, nil); mem != nil || err != nil {
		t.Errorf("without a cap: %v, %v", mem, err)
	}
}

func TestAutoMemoryUnit(t *testing.T) {
	for _, tc := range []struct{ largest, want float64 }{
		{0, 1 << 20}, {64 << 20, 1 << 20}, {65 << 20, 2 << 20}, {18.45e9, 1 << 29},
	} {
		if got := AutoMemoryUnit(tc.largest); got != tc.want {
			t.Errorf("AutoMemoryUnit(%v) = %v, want %v", tc.largest, got, tc.want)
		}
	}
}

// Budgets lists every device's budget in device order, the placement's
// Capacities.
func TestBudgets(t *testing.T) {
	got := Budgets([]DeviceMemory{{Device: 0, Budget: 3}, {Device: 1, Budget: 0}, {Device: 2, Budget: 7}})
	if !reflect.DeepEqual(got, []int{3, 0, 7}) {
		t.Errorf("Budgets = %v, want [3 0 7]", got)
	}
}

// Chunks share a device's memory and never divide it: with 2 and 4
// stages per device every device keeps its whole capacity, holds all of
// its stages' parameters for good, and a backward frees what its own
// forward took, whichever phase of the split each falls in.
func TestChunksKeepCapacity(t *testing.T) {
	g := loadModel(t, "llama7b.json")
	g.Accelerators = 8
	for _, tc := range []struct {
		chunks int
		order  placement.Order
	}{{2, placement.Loop}, {2, placement.V}, {4, placement.Loop}} {
		r, err := Run(context.Background(), g, Options{Chunks: tc.chunks, Order: tc.order})
		if err != nil {
			t.Fatal(err)
		}
		mem, err := r.Converted.Memory(r.Split, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mem {
			if m.Capacity != g.Memory {
				t.Errorf("%d chunks, %s: device %d has capacity %v, want the device's %v", tc.chunks, tc.order, m.Device, m.Capacity, g.Memory)
			}
		}
		p := r.Converted.Placement
		for i, b := range p.Blocks {
			if b.Kind == placement.Backward && b.Memory >= 0 {
				t.Errorf("%d chunks: backward %s frees %d", tc.chunks, p.Blocks[i].ID, b.Memory)
			}
		}
	}
}
