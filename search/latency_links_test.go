package search

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// bestBaselineWithin is the least makespan of a baseline that meets the
// latency budget, as built or re-timed under it (construct.WithLatency);
// 0 when none does.
func bestBaselineWithin(p *placement.Placement, n, memory, budget int) int {
	best := 0
	for _, m := range baseline.All() {
		s, err := m.Build(spec.Spec{Placement: p, MicroBatches: n, Memory: memory})
		if err != nil {
			continue
		}
		if s, ok := construct.WithLatency(s, budget); ok && (best == 0 || schedule.Makespan(s) < best) {
			best = schedule.Makespan(s)
		}
	}
	return best
}

// A latency budget on links that carry one transfer at a time (the
// Tessel paper's §VI-D inference budget, Lin et al., on a cluster whose
// links queue their transfers): the search returns a schedule the verifier
// accepts under both rules, every micro-batch within the budget, never
// worse than a baseline that meets it, the same bytes twice; where the
// time-optimal search of all N runs to its end it is that optimum, and
// the queue costs what it costs (the same budgets without channels end
// no later).
func TestLatencyOnQueuedLinks(t *testing.T) {
	for _, tc := range []struct {
		shape         string
		c, n, latency int
		want          int // the proven makespan with channels, 0 where not asserted
		free          int // the same without channels
	}{
		{"m-shape", 2, 8, 11, 30, 30},
		{"m-shape", 2, 8, 12, 28, 27},
		{"m-shape", 2, 8, 13, 27, 26},
		{"v-shape", 2, 8, 10, 0, 0},
		{"x-shape", 3, 6, 16, 0, 0},
		{"k-shape", 3, 8, 12, 0, 0},
	} {
		t.Run(fmt.Sprintf("%s/c=%d/N=%d/L=%d", tc.shape, tc.c, tc.n, tc.latency), func(t *testing.T) {
			p := placementtest.WithTransfers(placementtest.Builtin(t, tc.shape, placement.Options{Devices: 4, Inference: true}), tc.c, true)
			var out [2][]byte
			var res *Result
			for k := range out {
				var err error
				res, err = Run(context.Background(), spec.Spec{Placement: p, MicroBatches: tc.n, Latency: tc.latency}, Options{Jobs: 1})
				if err != nil {
					t.Fatal(err)
				}
				out[k] = fmt.Appendf(nil, "%v %v", res.Schedule.Instances, res.Source)
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Error("two runs, two schedules")
			}
			s := res.Schedule
			if !s.Placement.QueuedLinks || s.Latency != tc.latency {
				t.Fatalf("channels %v, budget %d recorded", s.Placement.QueuedLinks, s.Latency)
			}
			if err := verify.Schedule(s); err != nil {
				t.Fatal(err)
			}
			if m := schedule.MeasureLatency(s).Max; m > tc.latency {
				t.Errorf("max latency %d > budget %d", m, tc.latency)
			}
			if b := bestBaselineWithin(p, tc.n, 0, tc.latency); b > 0 && res.Makespan() > b {
				t.Errorf("makespan %d, a baseline within the budget %d", res.Makespan(), b)
			}
			if res.Makespan() < res.Bounds.Makespan {
				t.Errorf("makespan %d below the lower bound %d", res.Makespan(), res.Bounds.Makespan)
			}
			if tc.want == 0 {
				return
			}
			if res.Makespan() != tc.want || !res.Proven() {
				t.Errorf("makespan %d (proven %v), want %d proven", res.Makespan(), res.Proven(), tc.want)
			}
			q := placementtest.WithTransfers(placementtest.Builtin(t, tc.shape, placement.Options{Devices: 4, Inference: true}), tc.c, false)
			free, err := Run(context.Background(), spec.Spec{Placement: q, MicroBatches: tc.n, Latency: tc.latency}, Options{Jobs: 1})
			if err != nil {
				t.Fatal(err)
			}
			if free.Makespan() != tc.free {
				t.Errorf("without channels: makespan %d, want %d", free.Makespan(), tc.free)
			}
		})
	}
}

// TestOptimalLatencyOnQueuedLinks: the time-optimal search under a
// budget with channels, the links' order as the producers' or chosen
// (--link-order), answers a verified schedule within the budget.
func TestOptimalLatencyOnQueuedLinks(t *testing.T) {
	p := placementtest.WithTransfers(placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4, Inference: true}), 2, true)
	for _, linkOrder := range []bool{false, true} {
		to, err := Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 6, Latency: 12}, OptimalOptions{LinkOrder: linkOrder})
		if err != nil {
			t.Fatal(err)
		}
		if to.Schedule.Latency != 12 || verify.Schedule(to.Schedule) != nil || schedule.MeasureLatency(to.Schedule).Max > 12 {
			t.Errorf("link order %v: budget %d recorded, verify %v", linkOrder, to.Schedule.Latency, verify.Schedule(to.Schedule))
		}
	}
}
