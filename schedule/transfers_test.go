package schedule_test

import (
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// chosenFork is a -> b, a -> c, every block choosing between devices 0
// and 1, with a on 0, b on 0, c on 1 and every transfer taking 3.
func chosenFork(t *testing.T, channels bool) *schedule.Schedule {
	t.Helper()
	cands := [][]int{{0}, {1}}
	p := &placement.Placement{Name: "fork", Devices: 2, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Candidates: cands, Time: 2},
		{ID: "b", Kind: placement.Forward, Candidates: cands, Time: 1},
		{ID: "c", Kind: placement.Forward, Candidates: cands, Time: 1},
	}, Deps: []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}},
		Timing: placement.Timing{Costs: &placement.Costs{Times: [][]int{{2, 2}, {1, 1}, {1, 1}}, Transfers: map[placement.Dep][][]int{
			{From: 0, To: 1}: {{0, 3}, {3, 0}}, {From: 0, To: 2}: {{0, 3}, {3, 0}}}}}}
	q, err := placement.Choose(p, []int{0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	q.QueuedLinks = channels
	insC, err := compact.Compact(spec.New(q, 2), compact.Keep{Orders: [][]schedule.Ref{{{0, 0}, {0, 1}, {1, 0}, {1, 1}}, {{2, 0}, {2, 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: 2}, Instances: ins}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// She et al. §V-B, Fig. 7: the communication channels as rows of the
// trace. Without channels transfers overlap; with them they queue.
func TestTransfers(t *testing.T) {
	for _, tc := range []struct {
		channels bool
		want     []schedule.TransferSpan
	}{
		{false, []schedule.TransferSpan{{placement.Dep{From: 0, To: 2}, 0, placement.Link{From: 0, To: 1}, 2, 5}, {placement.Dep{From: 0, To: 2}, 1, placement.Link{From: 0, To: 1}, 4, 7}}},
		{true, []schedule.TransferSpan{{placement.Dep{From: 0, To: 2}, 0, placement.Link{From: 0, To: 1}, 2, 5}, {placement.Dep{From: 0, To: 2}, 1, placement.Link{From: 0, To: 1}, 5, 8}}},
	} {
		s := chosenFork(t, tc.channels)
		got := schedule.Transfers(s)
		if len(got) != len(tc.want) {
			t.Fatalf("channels %v: %v, want %v", tc.channels, got, tc.want)
		}
		for k := range got {
			if got[k] != tc.want[k] {
				t.Fatalf("channels %v: %v, want %v", tc.channels, got, tc.want)
			}
		}
	}
}
