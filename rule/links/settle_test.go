package links_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Settle iterates the compaction under a latency budget on queued links:
// a and b (device 0, time 1, in that order) both send to c (device 1)
// over one link taking 2 each, so c ends at 6, 6 after a starts. Within
// a budget of 6 nothing moves; within 5, every release of a moves c as
// far (b's tensor still queues behind a's), so the times never settle
// (an error); without channels the rule leaves the budget to the
// relaxation (nil).
func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		channels bool
		budget   int
		want     []int
		err      string
	}{
		{true, 6, []int{0, 1, 5}, ""},
		{true, 5, nil, "these device orders meet no latency budget 5 on links that carry one transfer at a time"},
		{false, 5, nil, ""},
	} {
		p := placementtest.TwoSenders(tc.channels)
		sp := spec.New(p, 1)
		solve := func(release []int) ([]int, error) {
			free := sp
			free.Latency = 0
			sys, rt := twoSenders(free, release)
			if err := (links.Rule{}).Constrain(rt); err != nil {
				return nil, err
			}
			start, _ := sys.Topological(rt.Visit)
			return start, nil
		}
		start, err := solve(nil)
		if err != nil {
			t.Fatal(err)
		}
		sp.Latency = tc.budget
		got, err := (links.Rule{}).Settle(&rule.Settling{Spec: sp, Var: func(r schedule.Ref) int { return r.Block }, Start: start, Solve: solve})
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("channels %v, budget %d: error %v, want %q", tc.channels, tc.budget, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("channels %v, budget %d: starts %v (error %v), want %v", tc.channels, tc.budget, got, err, tc.want)
		}
	}
}
