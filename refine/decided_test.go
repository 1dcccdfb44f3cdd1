package refine

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Windows that decide (Qi et al., "OptPipe: Memory- and
// Scheduling-Optimized Pipeline Parallelism for LLM Training", §3 and
// Appendix C, solved per window): LNS with Decisions re-solves the keep,
// offload or recompute of every freed instance, and shortens schedules
// of the memory baselines that a window keeping every decision cannot
// touch; every result verifies, is never longer, and is the same on
// every run.
func TestLNSDecides(t *testing.T) {
	v := placement.Options{Devices: 4, SplitBackward: true}
	cases := []struct {
		name               string
		offload, recompute bool
		memory, n          int
		base               func(spec.Spec) (*schedule.Schedule, error)
	}{
		{"1F1B+recompute", false, true, 2, 8, baseline.OneFOneBRecompute},
		{"PipeOffload", true, false, 2, 8, baseline.PipeOffload},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := placement.Builtin("v-shape", v)
			if err != nil {
				t.Fatal(err)
			}
			if c.offload {
				p = p.WithOffload(1)
			}
			if c.recompute {
				p = p.WithRecompute()
			}
			s, err := c.base(spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory})
			if err != nil {
				t.Fatal(err)
			}
			opt := LNSOptions{Steps: 4, Decisions: spec.Decisions{Offload: c.offload, Recompute: c.recompute}}
			var outs []string
			var got *schedule.Schedule
			for range 2 {
				got, _, err = LNS(context.Background(), s, opt)
				if err != nil {
					t.Fatal(err)
				}
				if err := verify.Schedule(got); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, fmt.Sprint(got.Instances, got.Decisions))
			}
			if outs[0] != outs[1] {
				t.Errorf("two runs differ")
			}
			t.Logf("%s: %d → %d", c.name, schedule.Makespan(s), schedule.Makespan(got))
			if schedule.Makespan(got) >= schedule.Makespan(s) {
				t.Errorf("makespan %d, want below the baseline's %d", schedule.Makespan(got), schedule.Makespan(s))
			}
			// Without Decisions the schedule stays as it is.
			same, _, err := LNS(context.Background(), s, LNSOptions{Steps: 4})
			if err != nil || same != s {
				t.Errorf("without Decisions: %v, schedule changed: %v", err, same != s)
			}
		})
	}
}
