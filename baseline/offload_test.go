package baseline

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// vPlacement is the V placement of the zero-bubble papers (2 stages per
// device, split backward) or the plain v-shape, with every forward
// offloadable (time t) and recomputable.
func savingPlacement(t *testing.T, devices int, v bool, offload int) *placement.Placement {
	t.Helper()
	opt := placement.Options{Devices: devices, SplitBackward: true}
	if v {
		opt.Chunks, opt.Order = 2, placement.V
	}
	p, err := placement.Builtin("v-shape", opt)
	if err != nil {
		t.Fatal(err)
	}
	return p.WithOffload(offload).WithRecompute()
}

// PipeOffload offloads every forward but the last stage's and fits the
// least budget: on the V placement one micro-batch alone holds two
// activations on device 0, so nothing without offload or recompute fits
// a budget of 1 (ZB-V needs 8), and PipeOffload does (Wan et al.,
// "PipeOffload", §3; OptPipe §4.1.3: "guarantees the minimum possible
// memory usage"). AdaOffload is never slower, and 1F1B with full
// recompute recomputes every forward and fits too.
func TestMemoryBaselinesFitTheLeastBudget(t *testing.T) {
	p := savingPlacement(t, 4, true, 1)
	const n = 16
	if _, err := ZBV(spec.Spec{Placement: p, MicroBatches: n, Memory: 1}); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("ZB-V at memory 1: %v, want over the budget", err)
	}
	po, err := PipeOffload(spec.Spec{Placement: p, MicroBatches: n, Memory: 1})
	if err != nil {
		t.Fatal(err)
	}
	off, rec := po.Count()
	if want := n * (2*4 - 1); off != want || rec != 0 {
		t.Errorf("PipeOffload offloads %d and recomputes %d, want %d and 0", off, rec, want)
	}
	ada, err := AdaOffload(spec.Spec{Placement: p, MicroBatches: n, Memory: 1})
	if err != nil {
		t.Fatal(err)
	}
	if schedule.Makespan(ada) > schedule.Makespan(po) {
		t.Errorf("AdaOffload %d slower than PipeOffload %d", schedule.Makespan(ada), schedule.Makespan(po))
	}
	re, err := OneFOneBRecompute(spec.Spec{Placement: p, MicroBatches: n, Memory: 1})
	if err != nil {
		t.Fatal(err)
	}
	if off, rec := re.Count(); off != 0 || rec != n*8 {
		t.Errorf("1F1B-recompute offloads %d and recomputes %d, want 0 and %d", off, rec, n*8)
	}
	for _, s := range []*schedule.Schedule{po, ada, re} {
		if s.Memory != 1 {
			t.Errorf("budget %d, want 1", s.Memory)
		}
		if err := verify.Schedule(s); err != nil {
			t.Error(err)
		}
	}
	t.Logf("V placement, memory 1, N=16: PipeOffload %d, AdaOffload %d, 1F1B-recompute %d",
		schedule.Makespan(po), schedule.Makespan(ada), schedule.Makespan(re))
}

// With memory to spare, AdaOffload's denser fill is faster than
// PipeOffload's (OptPipe, Appendix D and Fig. 4: "AdaOffload achieves a
// lower makespan"), here on the v-shape with a whole backward at memory 1.
func TestAdaOffloadDenserFill(t *testing.T) {
	p0, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	p := p0.WithOffload(1)
	po, err := PipeOffload(spec.Spec{Placement: p, MicroBatches: 16, Memory: 1})
	if err != nil {
		t.Fatal(err)
	}
	ada, err := AdaOffload(spec.Spec{Placement: p, MicroBatches: 16, Memory: 1})
	if err != nil {
		t.Fatal(err)
	}
	if schedule.Makespan(ada) >= schedule.Makespan(po) {
		t.Errorf("AdaOffload %d, PipeOffload %d: want AdaOffload faster", schedule.Makespan(ada), schedule.Makespan(po))
	}
}

// Without offloadable or recomputable forwards the baselines do not apply;
// a mixed schedule (Savings) offloads some stages and recomputes others.
func TestMemoryBaselinesApply(t *testing.T) {
	plain, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []func(spec.Spec) (*schedule.Schedule, error){PipeOffload, AdaOffload, OneFOneBRecompute} {
		if _, err := m(spec.New(plain, 8)); !errors.Is(err, ErrNotApplicable) {
			t.Errorf("on a placement without offload or recompute: %v, want not applicable", err)
		}
	}
	p := savingPlacement(t, 4, false, 2)
	s, err := Savings(spec.Spec{Placement: p, MicroBatches: 8, Memory: 2}, []placement.Action{placement.Offload, placement.Recompute, placement.Offload, placement.Keep})
	if err != nil {
		t.Fatal(err)
	}
	if off, rec := s.Count(); off != 16 || rec != 8 {
		t.Errorf("offloads %d, recomputes %d, want 16 and 8", off, rec)
	}
	if _, err := Savings(spec.New(plain, 8), []placement.Action{placement.Offload, placement.Keep, placement.Keep, placement.Keep}); err == nil {
		t.Error("Savings offloads a block that does not allow it")
	}
}

// Same input, same schedule.
func TestMemoryBaselinesDeterministic(t *testing.T) {
	p := savingPlacement(t, 4, true, 2)
	for _, m := range []func(spec.Spec) (*schedule.Schedule, error){PipeOffload, AdaOffload, OneFOneBRecompute} {
		a, errA := m(spec.Spec{Placement: p, MicroBatches: 12, Memory: 2})
		b, errB := m(spec.Spec{Placement: p, MicroBatches: 12, Memory: 2})
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		var ja, jb bytes.Buffer
		if err := a.Write(&ja); err != nil {
			t.Fatal(err)
		}
		if err := b.Write(&jb); err != nil {
			t.Fatal(err)
		}
		if ja.String() != jb.String() {
			t.Error("two runs differ")
		}
	}
}

// Below one activation no time-for-memory baseline has a schedule: each
// says so with ErrNoSchedule and no schedule (never a schedule-less
// ErrOverBudget, which callers read as "shown over the budget").
func TestMemoryBaselinesBelowOneActivation(t *testing.T) {
	p := savingPlacement(t, 4, false, 1)
	for i := range p.Blocks {
		p.Blocks[i].Memory *= 3 // every activation 3 units
	}
	for _, build := range []func(spec.Spec) (*schedule.Schedule, error){PipeOffload, AdaOffload, OneFOneBRecompute} {
		s, err := build(spec.Spec{Placement: p, MicroBatches: 8, Memory: 2})
		if s != nil || !errors.Is(err, ErrNoSchedule) || errors.Is(err, ErrOverBudget) {
			t.Errorf("memory 2: schedule %v, error %v; want none and ErrNoSchedule", s != nil, err)
		}
	}
}
