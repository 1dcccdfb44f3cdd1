package schedule_test

import (
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// LeastMemory is a lower bound on every schedule's peak (each baseline
// that applies, at every N), and where it is Exact, GPipe one
// micro-batch at a time meets it: a schedule under that budget exists.
// On a pipeline every device needs one activation; on the V placement
// the device of the first and last stage holds both stages' activations
// of one micro-batch.
func TestLeastMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    placement.Options
		want []int // every device's need, where given
	}{
		{"v-shape", placement.Options{}, []int{1, 1, 1, 1}},
		{"v-shape", placement.Options{SplitBackward: true}, []int{1, 1, 1, 1}},
		{"v-shape", placement.Options{Chunks: 2, Order: placement.V, SplitBackward: true}, []int{2, 2, 2, 2}},
		{"v-shape", placement.Options{Chunks: 2, Order: placement.Loop}, []int{2, 2, 2, 2}},
		{"m-shape", placement.Options{}, nil},
		{"k-shape", placement.Options{}, nil},
		{"x-shape", placement.Options{}, nil},
		{"dualpipe", placement.Options{}, nil},
	} {
		tc.o.Devices = 4
		p, err := placement.Builtin(tc.name, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		needs := schedule.LeastMemory(p, false, false)
		for d, x := range needs {
			if tc.want != nil && (x.Memory != tc.want[d] || !x.Proven) {
				t.Errorf("%s: device %d needs %+v, want %d", p.Name, d, x, tc.want[d])
			}
		}
		for _, m := range baseline.All() {
			for _, n := range []int{1, 4, 8} {
				s, err := m.Build(spec.New(p, n))
				if err != nil {
					continue
				}
				for d, peak := range schedule.Measure(s).PeakMemory {
					if needs[d].Proven && peak < needs[d].Memory {
						t.Errorf("%s: %s of %d micro-batches peaks at %d on device %d, below its least need %d", p.Name, m.Name, n, peak, d, needs[d].Memory)
					}
				}
			}
		}
		least := 0
		exact := true
		for _, x := range needs {
			least, exact = max(least, x.Memory), exact && x.Exact
		}
		if !exact {
			continue
		}
		// One micro-batch after another in the topological order.
		topo, _ := p.Topo()
		orders := make([][]schedule.Ref, p.Devices)
		for m := range 8 {
			for _, i := range topo {
				for _, d := range p.Blocks[i].Devices {
					orders[d] = append(orders[d], schedule.Ref{Block: i, Micro: m})
				}
			}
		}
		s, err := compact.Compact(spec.Spec{Placement: p, MicroBatches: 8}, compact.Keep{Orders: orders})
		if err != nil {
			t.Fatal(err)
		}
		s.Memory = least
		if err := verify.Schedule(s); err != nil {
			t.Errorf("%s: no schedule under the least budget %d: %v", p.Name, least, err)
		}
		if tc.name == "v-shape" {
			if _, err := baseline.GPipeRounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: least - 1}); least > 1 && !errors.Is(err, baseline.ErrOverBudget) {
				t.Errorf("%s: a schedule under %d, below the least budget %d", p.Name, least-1, least)
			}
			if s, err := baseline.GPipeRounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: least}); err != nil || verify.Schedule(s) != nil {
				t.Errorf("%s: GPipe in rounds under the least budget %d: %v", p.Name, least, err)
			}
		}
	}
}

// With offload or recompute allowed, a device still needs a forward's
// whole activation while it runs, and less between it and its consumer.
func TestLeastMemoryWithDecisions(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Blocks {
		p.Blocks[i].Memory *= 4
	}
	keep := schedule.LeastMemory(p, false, false)
	off := schedule.LeastMemory(p.WithOffload(1), true, false)
	for d := range keep {
		if keep[d].Memory != 8 || !keep[d].Exact || off[d].Memory != 4 || !off[d].Proven || off[d].Exact {
			t.Errorf("device %d: keep %+v, offload %+v; want exactly 8, and 4 as a bound", d, keep[d], off[d])
		}
	}
	need, budget, ok := schedule.Short(p, 5, keep, true)
	if !ok || need.Memory != 8 || budget != 5 {
		t.Errorf("short: %+v, %d, %v", need, budget, ok)
	}
	if text := schedule.NeedText(p, need, budget, nil); text != "device 0 needs 8 per micro-batch (at the start of f7), 5 left" {
		t.Errorf("text %q", text)
	}
}
