package report

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// OptimalText is tessel optimal's report (its bytes pinned by cmd/tessel's
// tests); here its parts.
func TestOptimalWriteText(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	res, err := search.Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 3, Memory: 4}, search.OptimalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum := NewSummary(res.Schedule, "time-optimal", res.Solution.Proven)
	var b bytes.Buffer
	if err := OptimalText(&b, res, sum, TextOptions{Placement: p, Memory: 4, MicroBatches: 3, Decisions: true, Units: 96}, 1500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"time-optimal schedule: v-shape, 4 devices, 3 micro-batches, memory 4\n\n", "\nmakespan     ", "\nlower bound  ", "\nbubble rate  ", " (budget 4)\n",
		"\ndecisions    0 activations offloaded, 0 recomputed\n", "\nverified     yes\n", "\nsearch time  1.5ms ("} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
