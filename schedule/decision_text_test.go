package schedule

import (
	"bytes"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

func TestRanges(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want string
	}{
		{nil, ""},
		{[]int{4}, "4"},
		{[]int{0, 1, 2, 3, 5, 7, 8, 9}, "0-3 5 7-9"},
		{[]int{1, 3}, "1 3"},
	} {
		if got := ranges(c.xs); got != c.want {
			t.Errorf("ranges(%v) = %q, want %q", c.xs, got, c.want)
		}
	}
}

func TestWriteDecisionsText(t *testing.T) {
	s := &Schedule{Spec: spec.Spec{Placement: chainOnOne("f0", "f1"), MicroBatches: 4}, Decisions: []Decision{
		{Block: 1, Micro: 2, Action: placement.Recompute}, {Block: 0, Micro: 1, Action: placement.Offload},
		{Block: 0, Micro: 0, Action: placement.Offload}, {Block: 1, Micro: 0, Action: placement.Offload},
	}}
	var b bytes.Buffer
	WriteDecisionsText(&b, s)
	want := "offloaded    f0 × 2: micro-batches 0-1\n" +
		"             f1 × 1: micro-batches 0\n" +
		"recomputed   f1 × 1: micro-batches 2\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	WriteDecisionsText(&b, &Schedule{Spec: spec.Spec{Placement: chainOnOne("a")}})
	if b.Len() != 0 {
		t.Errorf("no decisions: got %q, want nothing", b.String())
	}
}

func TestDecisionsText(t *testing.T) {
	s := &Schedule{Spec: spec.Spec{Placement: chainOnOne("f0", "f1"), MicroBatches: 2}, Decisions: []Decision{
		{Block: 0, Micro: 0, Action: placement.Offload}, {Block: 0, Micro: 1, Action: placement.Offload}, {Block: 1, Micro: 0, Action: placement.Recompute},
	}}
	if got, want := s.DecisionsText(), "2 activations offloaded, 1 recomputed"; got != want {
		t.Errorf("DecisionsText = %q, want %q", got, want)
	}
}
