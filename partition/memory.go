package partition

import (
	"fmt"
	"math"

	"github.com/tessel-pp/tessel/limits"
)

// One memory model from the profile to the schedule: a device holds its
// stages' parameters, gradients and optimizer state for good; what is
// left of its memory is the schedule's budget for activations, in
// placement memory units. A schedule may offload or recompute
// activations, but a forward block still needs one micro-batch's whole
// activation on its device while it runs and while its backward runs:
// where even that does not fit, no schedule does.

// DeviceMemory is one device's memory under a split placed on it, in the
// model's memory (bytes for a profile in bytes).
type DeviceMemory struct {
	Device   int
	Capacity float64 // the device's memory
	// Static is what its stages hold for good: parameters, gradients and
	// optimizer state.
	Static float64
	// Free = Capacity − Static: what the schedule may use.
	Free float64
	// Activation is the largest activation of one micro-batch of one of
	// its forward blocks: the least any schedule needs, with offload and
	// recompute.
	Activation float64
	// Unit is the model memory of one placement unit on this device (the
	// placement's MemoryUnit, or under the Tessel paper's convention the
	// largest activation of its forward blocks, each of which counts 1).
	Unit float64
	// Budget is Free in placement units, ⌊Free / Unit⌋: the device's
	// budget for the schedule search (placement.Placement.Capacities);
	// 0 where the device has no activations to budget.
	Budget int
}

// NoFitError says that a device cannot run its stages under any schedule,
// even with every activation offloaded or recomputed.
type NoFitError struct {
	DeviceMemory
	Bytes bool
}

func (e *NoFitError) Error() string {
	f := func(x float64) string { return FormatMemory(x, e.Bytes) }
	if e.Free < 0 {
		return fmt.Sprintf("device %d cannot hold its stages: their parameters, gradients and optimizer state take %s of its %s", e.Device, f(e.Static), f(e.Capacity))
	}
	return fmt.Sprintf("device %d cannot run its stages even with offload and recompute: parameters, gradients and optimizer state take %s of its %s, and the %s left are less than one micro-batch's activation of %s",
		e.Device, f(e.Static), f(e.Capacity), f(e.Free), f(e.Activation))
}

// FormatMemory writes a memory in bytes as GB (10⁹ bytes) or MB, and any
// other unit as a plain number.
func FormatMemory(x float64, bytes bool) string {
	switch {
	case !bytes:
		return fmt.Sprintf("%.4g", x)
	case math.Abs(x) >= 1e9:
		return fmt.Sprintf("%.2f GB", x/1e9)
	}
	return fmt.Sprintf("%.1f MB", x/1e6)
}

// Budgets are the devices' budgets of mem (DeviceMemory.Budget), one per
// device: the placement's Capacities for the schedule search.
func Budgets(mem []DeviceMemory) []int {
	out := make([]int, len(mem))
	for d, m := range mem {
		out[d] = m.Budget
	}
	return out
}

// Memory is each device's memory and budget when the split s, converted
// to c, runs on devices of the given capacities (one per placement
// device, 0 for the graph's cap; nil: the graph's cap on every device). It returns nil, nil
// where there is nothing to budget (no cap, or a graph without
// activations), and a *NoFitError naming the first device that cannot run
// its stages under any schedule.
func (c *Converted) Memory(s *Split, capacities []float64) ([]DeviceMemory, error) {
	g := s.Graph
	p := c.Placement
	if g.Activations == nil || g.Static == nil || !g.Training() {
		return nil, nil
	}
	if capacities == nil {
		if g.Memory <= 0 {
			return nil, nil
		}
		for range p.Devices {
			capacities = append(capacities, g.Memory)
		}
	}
	if len(capacities) != p.Devices {
		return nil, fmt.Errorf("%d capacities for %d devices", len(capacities), p.Devices)
	}
	out := make([]DeviceMemory, p.Devices)
	for d := range out {
		cp := capacities[d]
		if cp <= 0 {
			cp = g.Memory
		}
		out[d] = DeviceMemory{Device: d, Capacity: cp, Unit: c.MemoryUnit}
	}
	for st, blocks := range c.StageBlocks {
		if len(blocks) > 0 {
			out[p.Blocks[blocks[0]].Devices[0]].Static += c.Static[st]
		}
	}
	for i, b := range p.Blocks {
		d := &out[b.Devices[0]]
		d.Activation = math.Max(d.Activation, c.Activation[i])
	}
	for d := range out {
		m := &out[d]
		m.Free = m.Capacity - m.Static
		if m.Unit <= 0 {
			m.Unit = m.Activation
		}
		if m.Free < 0 || m.Free < m.Activation*(1-1e-12) {
			return nil, &NoFitError{DeviceMemory: *m, Bytes: g.Bytes}
		}
		if m.Unit > 0 {
			m.Budget = int(math.Floor(min(m.Free/m.Unit, limits.Memory) + 1e-9)) // more is no tighter
		}
	}
	return out, nil
}

// AutoMemoryUnit is the memory unit of a placement made from a profile in
// bytes whose largest forward block stashes largest bytes: the least power
// of two, at least 1 MiB, that gives that block at most 64 units. Round
// units read well; 64 steps keep the block memories small integers while
// the smaller checkpoints still count.
func AutoMemoryUnit(largest float64) float64 {
	u := float64(1 << 20)
	for largest/u > 64 {
		u *= 2
	}
	return u
}
