package refine

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Under a latency budget (the Tessel paper's §VI-D, Fig. 15: inference
// under a latency budget), LNS windows hold the latency rule: every
// schedule LNS returns records and meets the budget (the verifier checks
// it), is never longer than the one it was given, and on some cases is
// shorter; the current schedule always fits its own windows (a window
// that did not admit it would be an error).
func TestLNSLatency(t *testing.T) {
	won := 0
	for _, name := range []string{"v-shape", "m-shape", "x-shape", "k-shape"} {
		p, err := placement.Builtin(name, placement.Options{Devices: 4, Inference: true})
		if err != nil {
			t.Fatal(err)
		}
		cp := p.CriticalPath()
		for _, tc := range []struct{ n, slack int }{{6, 0}, {8, 1}, {8, 2}, {10, 3}} {
			budget := cp + tc.slack
			s, err := construct.LatencyList(spec.Spec{Placement: p, MicroBatches: tc.n, Latency: budget})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := LNS(context.Background(), s, LNSOptions{Sizes: []int{8, 16}, Effort: 100_000, Steps: 10})
			if err != nil {
				t.Fatalf("%s N=%d budget %d: %v", name, tc.n, budget, err)
			}
			if got.Latency != budget {
				t.Fatalf("%s N=%d budget %d: result records budget %d", name, tc.n, budget, got.Latency)
			}
			if err := verify.Schedule(got); err != nil {
				t.Fatalf("%s N=%d budget %d: %v", name, tc.n, budget, err)
			}
			if schedule.Makespan(got) > schedule.Makespan(s) {
				t.Errorf("%s N=%d budget %d: makespan %d → %d", name, tc.n, budget, schedule.Makespan(s), schedule.Makespan(got))
			}
			if schedule.Makespan(got) < schedule.Makespan(s) {
				won++
			}
		}
	}
	if won == 0 {
		t.Error("LNS under a latency budget never shortened a schedule")
	}
	t.Logf("%d of 16 shortened", won)
}
