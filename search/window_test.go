package search

import (
	"context"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Beyond 2·WindowMicroBatches, Run searches a window and extends it: the
// answer is verified at N, its makespan is what the extension says, and
// it is no worse than the search of all N (run here by its phases, as
// before the window).
func TestWindowNoWorseThanWholeSearch(t *testing.T) {
	cases := []struct {
		name   string
		opt    placement.Options
		memory int
		n      int
	}{
		{"v-shape", placement.Options{Devices: 4}, 6, 200},
		{"m-shape", placement.Options{Devices: 4}, 8, 161},
		{"v-shape", placement.Options{Devices: 4, SplitBackward: true, Chunks: 2, Order: placement.V}, 0, 300},
		{"x-shape", placement.Options{Devices: 4}, 0, 150},
	}
	for _, c := range cases {
		p := placementtest.Builtin(t, c.name, c.opt)
		sp := spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory}
		res, err := Run(context.Background(), sp, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if res.Window != windowSize(c.n) {
			t.Errorf("%s N=%d: window %d, want %d", p.Name, c.n, res.Window, windowSize(c.n))
		}
		if err := verify.Schedule(res.Schedule); err != nil || res.Schedule.MicroBatches != c.n {
			t.Fatalf("%s: the extended schedule of %d micro-batches: %v", p.Name, res.Schedule.MicroBatches, err)
		}
		whole := newState(sp, Options{}, nil, time.Now())
		if err := whole.runPhases(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, want := res.Makespan(), whole.res.Makespan(); got > want {
			t.Errorf("%s N=%d: window extended to makespan %d, the whole search %d", p.Name, c.n, got, want)
		}
		if res.Steady == nil || res.Steady.Period < 1 {
			t.Errorf("%s: no steady state known for the extension", p.Name)
		}
	}
}

// An extension's makespan (found without building it) and steady state
// are the built schedule's; and N equal to the window's extends to
// itself.
func TestExtensionAgreesWithItsSchedule(t *testing.T) {
	p := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4})
	res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 64, Memory: 8}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{64, 88, 64 + 24*10} {
		x, ok := schedule.Extensible(res.Schedule, n)
		if !ok {
			t.Fatalf("N=%d: not extensible", n)
		}
		s, err := x.Schedule(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		if got, want := x.Makespan(), schedule.Makespan(s); got != want {
			t.Errorf("N=%d: Makespan %d, the schedule's %d", n, got, want)
		}
		if n == 64 {
			continue
		}
		st, want := x.Steady(), schedule.Steady(s)
		if st == nil || want == nil || st.Period*want.PerPeriod != want.Period*st.PerPeriod {
			t.Errorf("N=%d: steady state %+v, Steady finds %+v", n, st, want)
		}
	}
	if _, ok := schedule.Extensible(res.Schedule, 63); ok {
		t.Error("extensible to fewer micro-batches")
	}
}

// At a million micro-batches the v-shape's answer is its window's
// extension kept by its period: verified from the period (never all
// its instances checked), its figures measured from the form, and its
// makespan the lower bound.
func TestMillionMicroBatchesByThePeriod(t *testing.T) {
	testskip.Short(t, "a schedule of 8 million instances")
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 1_000_000, Memory: 6}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Schedule
	if s.Periodic == nil || !verify.FromPeriod(s) {
		t.Fatalf("not a schedule checked from its period (form %v)", s.Periodic != nil)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	if ms := schedule.Makespan(s); ms != res.Bounds.Makespan || res.Steady == nil {
		t.Errorf("makespan %d, lower bound %d, steady state %v", ms, res.Bounds.Makespan, res.Steady)
	}
}

// A search given the time beyond the window answers within its limit at
// any N: at large N its window is searched with the time and extended
// (the constructions of all N alone outlasted a short limit), at smaller
// N the window's answer is a start of the search of all N; either way
// the answer is verified at N and no worse than the search without a
// limit, which searches the same window.
func TestTimeLimitBeyondTheWindow(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	for _, n := range []int{300, 20_000} {
		sp := spec.Spec{Placement: p, MicroBatches: n, Memory: 6}
		plain, err := Run(context.Background(), sp, Options{})
		if err != nil {
			t.Fatal(err)
		}
		const limit = 3 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		res, err := Run(ctx, sp, Options{UseTime: true, TimeLimit: limit})
		cancel()
		if err != nil {
			t.Fatalf("N %d with a limit of %v: %v", n, limit, err)
		}
		if err := verify.Schedule(res.Schedule); err != nil || res.Schedule.MicroBatches != n {
			t.Fatalf("N %d: answer of %d micro-batches, verify: %v", n, res.Schedule.MicroBatches, err)
		}
		if got, want := res.Makespan(), plain.Makespan(); got > want {
			t.Errorf("N %d: %d with the time, %d without", n, got, want)
		}
		if n*len(p.Blocks) > timedWholeInstances && res.Window == 0 {
			t.Errorf("N %d: the answer is not the window's extended", n)
		}
	}
}
