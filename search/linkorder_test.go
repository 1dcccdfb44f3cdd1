package search

import (
	"context"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// With LinkOrder the time-optimal search chooses the order of the
// transfers on a link (She et al., operator-level MIP, §III eqs 14–15),
// records it, and the schedule passes the verifier: a then b on device 0
// (a → b), c after a and d after b on device 1, a's tensor taking 4 and
// b's 1: 9 instead of the producers' order's 11.
func TestOptimalLinkOrder(t *testing.T) {
	p := &placement.Placement{
		Name:    "two-transfers",
		Devices: 2,
		Blocks: []placement.Block{
			{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "b", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1},
			{ID: "d", Kind: placement.Forward, Devices: []int{1}, Time: 5},
		},
		Deps:   []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}, {From: 1, To: 3}},
		Timing: placement.Timing{Transfers: map[placement.Dep]int{{From: 0, To: 2}: 4, {From: 1, To: 3}: 1}, QueuedLinks: true},
	}
	for _, tc := range []struct {
		order bool
		want  int
	}{{false, 11}, {true, 9}} {
		r, err := Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 1}, OptimalOptions{LinkOrder: tc.order})
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(r.Schedule); err != nil {
			t.Fatalf("link order %v: %v", tc.order, err)
		}
		if m := schedule.Makespan(r.Schedule); m != tc.want || !r.Solution.Proven {
			t.Errorf("link order %v: makespan %d (proven %v), want %d proven", tc.order, m, r.Solution.Proven, tc.want)
		}
		if got := r.Schedule.LinkOrder != nil; got != tc.order {
			t.Errorf("link order %v: recorded %v", tc.order, got)
		}
	}
	q := *p
	q.QueuedLinks = false
	if _, err := Optimal(context.Background(), spec.Spec{Placement: &q, MicroBatches: 1}, OptimalOptions{LinkOrder: true}); err == nil || !strings.Contains(err.Error(), "channels") {
		t.Errorf("without channels: %v", err)
	}
}
