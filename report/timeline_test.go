package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/timeline"
)

// The replan's text writes makespans in the placement's units where it
// has them (a placement split from a model file), its integers where it
// has none, and the memory budget in bytes where the units size it.
func TestTimelineUnits(t *testing.T) {
	fresh := 15304
	secs := 0.1
	steps := []timeline.Step{{Iteration: 100, Devices: 3, Makespan: 15564, LowerBound: 15244, Fresh: &fresh, FreshSeconds: &secs, Changes: []string{"device 1 leaves"}}}
	for _, c := range []struct {
		name   string
		units  *quantity.Scale
		memory int
		want   []string
	}{
		{"integers", nil, 8, []string{"memory 8,", "old schedule  makespan 11628\n", " 15564 ", " 15244 ", " 15304 "}},
		{"model unit", &quantity.Scale{Step: 0.025}, 0, []string{"memory unlimited,", "old schedule  makespan 290.7\n", " 389.1 ", " 381.1 ", " 382.6 "}},
		{"milliseconds", &quantity.Scale{Time: "ms", Step: 0.025, MemoryBytes: 1 << 30}, 40, []string{"memory 42.95 GB,", "old schedule  makespan 290.70 ms\n", " 389.10 ms ", " 381.10 ms "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &timeline.Report{Placement: "chain", Devices: 4, MicroBatches: 16, Memory: c.memory, Old: 11628, Steps: steps, Units: c.units}
			var b bytes.Buffer
			Timeline(&b, r)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
