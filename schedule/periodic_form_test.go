package schedule_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

func sortedInstances(ins []schedule.Instance) []schedule.Instance {
	out := slices.Clone(ins)
	slices.SortFunc(out, func(a, b schedule.Instance) int {
		if a.Micro != b.Micro {
			return a.Micro - b.Micro
		}
		return a.Block - b.Block
	})
	return out
}

// The periodic form of an extension describes the instances the
// extension builds, its makespan is the extension's, and F_r with r
// repetitions is the extension to as many fewer micro-batches.
func TestExtensionForm(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := oneF1B(t, p, 24, 0)
	for _, n := range []int{30, 100} {
		x, ok := schedule.Extensible(s, n)
		if !ok {
			t.Fatalf("N=%d: not extensible", n)
		}
		full, err := x.Schedule(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		f := x.Form()
		if f == nil {
			t.Fatalf("N=%d: no periodic form", n)
		}
		ps := &schedule.Schedule{Spec: full.Spec, Periodic: f}
		got, err := ps.Materialize(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sortedInstances(got.Instances), sortedInstances(full.Instances)) {
			t.Errorf("N=%d: the form's instances are not the extension's", n)
		}
		if a, b := schedule.Makespan(ps), x.Makespan(); a != b {
			t.Errorf("N=%d: form makespan %d, extension's %d", n, a, b)
		}
		m, want := schedule.Measure(ps), schedule.Measure(full)
		if m.Makespan != want.Makespan || !slices.Equal(m.PeakMemory, want.PeakMemory) || !slices.Equal(m.Loads, want.Loads) || m.BubbleRate != want.BubbleRate {
			t.Errorf("N=%d: measured from the form %+v, in full %+v", n, m, want)
		}
		if f.Repetitions > 1 {
			small := ps.Resized(f.Repetitions - 1)
			y, _ := schedule.Extensible(s, n-f.Shift.Micro)
			ys, _ := y.Schedule(context.Background())
			if !slices.Equal(sortedInstances(small.Instances), sortedInstances(ys.Instances)) {
				t.Errorf("N=%d: one repetition fewer is not the extension to %d", n, n-f.Shift.Micro)
			}
		}
	}
}

// An extension stopped by its context answers the context's error, both
// built in full and by its period.
func TestExtensionStops(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := oneF1B(t, p, 24, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{24 + 1000, 24 + 200000} { // below and above PeriodicInstances
		x, ok := schedule.Extensible(s, n)
		if !ok {
			t.Fatalf("N=%d: not extensible", n)
		}
		if _, err := x.Schedule(ctx); err != context.Canceled {
			t.Errorf("N=%d: %v, want context.Canceled", n, err)
		}
	}
}

// A form whose counts do not make the schedule's instances is refused
// before anything is built.
func TestPeriodicFormRefused(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := oneF1B(t, p, 24, 0)
	x, _ := schedule.Extensible(s, 48)
	for _, tc := range []struct {
		name string
		edit func(f *schedule.PeriodicForm)
	}{
		{"repetitions", func(f *schedule.PeriodicForm) { f.Repetitions = 1 << 40 }},
		{"shift", func(f *schedule.PeriodicForm) { f.Shift.Micro = 0 }},
		{"empty period", func(f *schedule.PeriodicForm) { f.Period = nil }},
	} {
		f := x.Form()
		tc.edit(f)
		ps := &schedule.Schedule{Spec: s.Spec.WithMicroBatches(48), Periodic: f}
		if _, err := ps.Materialize(context.Background()); err == nil {
			t.Errorf("%s: built", tc.name)
		}
	}
}
