package report

import (
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/measure"
)

// tessel measure's text: the measured figures beside the predicted, the
// actions that differ most, the terms of the model and, with the
// prediction outside the spread, the term that moves it most.
func TestMeasure(t *testing.T) {
	rep := &measure.Report{Name: "zbh1", Placement: "chain", Devices: 2, MicroBatches: 4, Mode: "blocking", Warmup: 1,
		Device: "cpu", Backend: "gloo", DType: "float32", Torch: "1.13", Iterations: []float64{100, 102, 98},
		Measured: measure.Figures{Iteration: 100, Idle: []float64{10, 20}, BubbleRate: 0.15}, Spread: [2]float64{98, 102},
		Predicted: measure.Figures{Iteration: 90, Idle: []float64{8, 16}, BubbleRate: 0.13}, Error: -0.1, ErrorLeast: -0.08, Outside: true,
		Actions: []measure.ActionDiff{{Device: 1, Op: "f0@2", Measured: measure.Span{Start: 10, End: 13}, Predicted: measure.Span{Start: 9, End: 11}}},
		Terms: []measure.Term{{Name: "forward", Count: 8, Measured: 1.5, Predicted: 1, Moves: 8}, {Name: "transfer", Count: 6, Measured: 2, Predicted: 2, Samples: 3},
			{Name: "overhead", Count: 24, Measured: 0.25, Predicted: 0.25}}}
	var b strings.Builder
	if err := Measure(&b, measure.Summary{Reports: []*measure.Report{rep}}, "", "trace.json"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"chain (zbh1): 2 devices, 4 micro-batches, blocking programs; 3 iterations after 1 warm-up (cpu, gloo, float32, torch 1.13)\n",
		"iteration", "100.0 ms [98.0–102.0]", "outside the measured spread", "device 1 idle", "bubble rate", "actions that differ most",
		"device 1  f0@2  measured 3.00 ms at 10.0  predicted 2.00 ms at 9.0", "transfer", "3 blocked waits", "per action, 24 actions per iteration",
		"off by -10.0 ms: " + rep.Culprit() + "\n", "wrote trace.json (open it in ui.perfetto.dev)\n"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
}
