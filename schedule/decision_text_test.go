package schedule_test

import (
	"bytes"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

func TestWriteDecisionsText(t *testing.T) {
	s := &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("f0", "f1"), MicroBatches: 4}, Decisions: []schedule.Decision{
		{Block: 1, Micro: 2, Action: placement.Recompute}, {Block: 0, Micro: 1, Action: placement.Offload},
		{Block: 0, Micro: 0, Action: placement.Offload}, {Block: 1, Micro: 0, Action: placement.Offload},
	}}
	var b bytes.Buffer
	schedule.WriteDecisionsText(&b, s)
	want := "offloaded    f0 × 2: micro-batches 0-1\n" +
		"             f1 × 1: micro-batches 0\n" +
		"recomputed   f1 × 1: micro-batches 2\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	schedule.WriteDecisionsText(&b, &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("a")}})
	if b.Len() != 0 {
		t.Errorf("no decisions: got %q, want nothing", b.String())
	}
}

func TestDecisionsText(t *testing.T) {
	s := &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("f0", "f1"), MicroBatches: 2}, Decisions: []schedule.Decision{
		{Block: 0, Micro: 0, Action: placement.Offload}, {Block: 0, Micro: 1, Action: placement.Offload}, {Block: 1, Micro: 0, Action: placement.Recompute},
	}}
	if got, want := s.DecisionsText(), "2 activations offloaded, 1 recomputed"; got != want {
		t.Errorf("DecisionsText = %q, want %q", got, want)
	}
}
