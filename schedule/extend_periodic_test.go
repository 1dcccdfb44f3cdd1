package schedule_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// alternating is split2 with n micro-batches one after the other, 6
// apart, the even ones recomputing f0 before i0 (device 0: f0 [0,1),
// recompute [3,4), i0 [4,5), w0 [5,6)), the odd ones keeping it: it
// repeats every 2 micro-batches, 12 later.
func alternating(t *testing.T, n int) *schedule.Schedule {
	t.Helper()
	starts := map[string][]int{}
	for m := range n {
		for id, at := range map[string]int{"f0": 0, "f1": 1, "i1": 2, "w1": 3, "i0": 4, "w0": 5} {
			starts[id] = append(starts[id], 6*m+at)
		}
	}
	s := split2(t, starts)
	for m := 0; m < n; m += 2 {
		decide(t, s, "f0", m, placement.Recompute, 6*m+3, 0)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExtendPeriodic(t *testing.T) {
	s := alternating(t, 6)
	per, ok := schedule.FindPeriodicity(s)
	if want := (schedule.Periodicity{PerPeriod: 2, Period: 12, From: 0, Run: 4}); !ok || per != want {
		t.Fatalf("schedule.FindPeriodicity = %+v, %v; want %+v (every 2 micro-batches, 12 later)", per, ok, want)
	}
	got, err := schedule.ExtendPeriodic(s, per, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := alternating(t, 10)
	if got.MicroBatches != 10 || !slices.Equal(got.Instances, want.Instances) {
		t.Errorf("extended instances differ from the schedule built for 10 micro-batches:\n got %v\nwant %v", got.Instances, want.Instances)
	}
	if !slices.Equal(got.Decisions, want.Decisions) {
		t.Errorf("extended decisions = %v, want %v", got.Decisions, want.Decisions)
	}
	if ms := per.Extended(s, 10); ms != schedule.Makespan(want) {
		t.Errorf("Extended = %d, want the makespan at 10, %d", ms, schedule.Makespan(want))
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{9, "not 2 more per period"},
		{4, "not 2 more per period"},
	} {
		if _, err := schedule.ExtendPeriodic(s, per, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("schedule.ExtendPeriodic to %d: %v, want an error with %q", c.n, err, c.want)
		}
	}
}

func TestFindPeriodicityNone(t *testing.T) {
	s := alternating(t, 6)
	// Micro-batch 5 starts later: what repeats is micro-batches 0..4,
	// every 2 of them, so the run ends before micro-batch 3.
	for x, in := range s.Instances {
		if in.Micro == 5 {
			s.Instances[x].Start += 7
		}
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	if per, ok := schedule.FindPeriodicity(s); !ok || per.Run != 3 {
		t.Errorf("schedule.FindPeriodicity = %+v, %v; want a run of 3 micro-batches", per, ok)
	}
	// Three micro-batches, each different: nothing repeats twice.
	s = alternating(t, 3)
	for x, in := range s.Instances {
		s.Instances[x].Start += in.Micro * in.Micro
	}
	for x, d := range s.Decisions {
		s.Decisions[x].Start += d.Micro * d.Micro
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	if per, ok := schedule.FindPeriodicity(s); ok {
		t.Errorf("schedule.FindPeriodicity = %+v on a schedule that does not repeat", per)
	}
}
