package search

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// One micro-batch of the v-shape runs down the devices and back up: its
// makespan is the critical path (the Tessel paper's Fig. 3 shapes).
func TestOneMicroBatch(t *testing.T) {
	for _, name := range placement.BuiltinNames() {
		p := placementtest.Builtin(t, name, placement.Options{Devices: 4})
		s, err := OneMicroBatch(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Instances) != p.K() || s.MicroBatches != 1 {
			t.Errorf("%s: %d instances of %d micro-batches, want %d of 1", name, len(s.Instances), s.MicroBatches, p.K())
		}
		if name == "v-shape" && schedule.Makespan(s) != p.CriticalPath() {
			t.Errorf("v-shape: makespan %d, want the critical path %d", schedule.Makespan(s), p.CriticalPath())
		}
	}
}

func TestWriteBuiltins(t *testing.T) {
	o := placement.Options{Devices: 4, ForwardTime: 1, BackwardTime: 3, InputTime: 1, WeightTime: 1, Chunks: 2, Order: placement.Loop, SplitBackward: true}
	var b bytes.Buffer
	if err := WriteBuiltins(&b, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"v-shape", "; every backward b split into input i and weight w; 8 stages, 2 per device, order loop\n", " blocks on 4 devices, device loads "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
