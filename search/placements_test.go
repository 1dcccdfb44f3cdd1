package search

import (
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
