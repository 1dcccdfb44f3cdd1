package placement

import (
	"strings"
	"testing"
)

func TestDeclare(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 2, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	if q, err := Declare(p, Decisions{}); err != nil || q != p {
		t.Errorf("no decisions: %v, a new placement %v", err, q != p)
	}
	q, err := Declare(p, Decisions{Offload: true, OffloadTime: 2, Recompute: true})
	if err != nil {
		t.Fatal(err)
	}
	c := q.Consumers()
	for i, b := range q.Blocks {
		forward := b.Kind == Forward
		if q.Offloadable(i, c) != forward || q.Recomputable(i, c) != forward || forward && q.OffloadTime(i) != 2 {
			t.Errorf("%s: offloadable %v (time %d), recomputable %v", b.ID, q.Offloadable(i, c), q.OffloadTime(i), q.Recomputable(i, c))
		}
	}
	if k := q.Kept(); k.HasOffload() || k.HasRecompute() {
		t.Errorf("Kept still allows decisions")
	}
	if p.HasOffload() || p.HasRecompute() {
		t.Errorf("Declare changed its argument")
	}
	for _, tc := range []struct {
		o    Decisions
		want string
	}{
		{Decisions{Offload: true}, "no block may be offloaded"},
		{Decisions{OffloadTime: 1}, "an offload time without offload"},
		{Decisions{Offload: true, OffloadTime: -1}, "offload time must be in"},
	} {
		if _, err := Declare(p, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	inf, err := Builtin("v-shape", Options{Devices: 2, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Declare(inf, Decisions{Recompute: true}); err == nil {
		t.Errorf("recompute on an inference placement")
	}
}
