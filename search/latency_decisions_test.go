package search

import (
	"context"
	"errors"
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

// A latency budget with offload or recompute (Lin et al., Tessel, §VI-D's
// budget; Qi et al., OptPipe, Appendix C's decisions): every construction
// that decides, the baselines PipeOffload, AdaOffload and 1F1B with
// recompute among them, is re-timed under the budget with its decisions
// or left out; the search returns a verified schedule within both
// budgets, no worse than the best baseline within them, the same twice;
// where nothing meets them, the one-line error (ErrLatency).
func TestLatencyWithDecisions(t *testing.T) {
	split := placement.Options{Devices: 4, SplitBackward: true}
	vsplit := placement.Options{Devices: 4, Chunks: 2, Order: "v", SplitBackward: true}
	for _, tc := range []struct {
		name               string
		opt                placement.Options
		memory, n, latency int
		offload, recompute bool
		windows            int    // Options.DecidedWindows
		want               string // the error; "" when a schedule is found
	}{
		{"offload", split, 2, 8, 14, true, false, 0, ""},
		{"recompute", split, 2, 8, 16, false, true, 0, ""},
		{"recompute, windows that decide", split, 2, 8, 16, false, true, 2, ""},
		{"offload, none found", vsplit, 1, 8, 18, true, false, 0, `placement "v-shape-v2-split": no schedule found within latency budget 18 and memory 1, with or without offload`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := placementtest.Builtin(t, "v-shape", tc.opt)
			if tc.offload {
				p = p.WithOffload(1)
			}
			if tc.recompute {
				p = p.WithRecompute()
			}
			sp := spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.memory, Latency: tc.latency, Allowed: spec.Decisions{Offload: tc.offload, Recompute: tc.recompute}}
			opt := Options{DecidedWindows: tc.windows, Jobs: 1}
			var out [2]string
			var res *Result
			for k := range out {
				var err error
				res, err = Run(context.Background(), sp, opt)
				if tc.want != "" {
					if !errors.Is(err, ErrLatency) || err.Error() != tc.want {
						t.Fatalf("got %v, want %q", err, tc.want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				out[k] = fmt.Sprintf("%v %v %v", res.Schedule.Instances, res.Schedule.Decisions, res.Source)
			}
			if out[0] != out[1] {
				t.Error("two runs, two schedules")
			}
			if tc.windows > 0 && res.Refined.Steps == 0 {
				t.Error("no window that decides ran")
			}
			s := res.Schedule
			if s.Latency != tc.latency || s.Memory != tc.memory {
				t.Fatalf("budgets %d and %d recorded", s.Latency, s.Memory)
			}
			if err := verify.Schedule(s); err != nil {
				t.Fatal(err)
			}
			if m := schedule.MeasureLatency(s).Max; m > tc.latency {
				t.Errorf("max latency %d > budget %d", m, tc.latency)
			}
			if off, rec := s.Count(); off+rec == 0 || (off > 0 && !tc.offload) || (rec > 0 && !tc.recompute) {
				t.Errorf("%d offloaded, %d recomputed", off, rec)
			}
			best, name := 0, ""
			for _, m := range baseline.All() {
				b, err := m.Build(spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.memory})
				if err != nil || !sp.Allowed.Permit(b.Count()) {
					continue
				}
				if b, ok := construct.WithLatency(b, tc.latency); ok && (best == 0 || schedule.Makespan(b) < best) {
					best, name = schedule.Makespan(b), m.Name
				}
			}
			if best > 0 && res.Makespan() > best {
				t.Errorf("makespan %d, baseline %s within the budgets %d", res.Makespan(), name, best)
			}
			if res.Makespan() < res.Bounds.Makespan || (res.Proven() && res.Makespan() > res.Bounds.Makespan) {
				t.Errorf("makespan %d, bound %d, proven %v", res.Makespan(), res.Bounds.Makespan, res.Proven())
			}
		})
	}
}

// TestBaselinesWithinLatency: PipeOffload, AdaOffload and 1F1B with
// recompute (v-shape, 4 devices, memory 2, 8 micro-batches; latencies 25,
// 25 and 32 as built, critical path 18), re-timed under a budget their
// orders meet, keep their decisions and meet it; under one they do not,
// they are left out.
func TestBaselinesWithinLatency(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}).WithOffload(1).WithRecompute()
	for _, tc := range []struct {
		name   string
		budget int
		want   int // makespan; 0: left out
	}{
		{"pipeoffload", 25, 44},
		{"pipeoffload", 18, 44},
		{"adaoffload", 18, 44},
		{"1f1b-recompute", 32, 55},
		{"1f1b-recompute", 20, 52},
		{"1f1b-recompute", 19, 0},
	} {
		var s *schedule.Schedule
		for _, m := range baseline.All() {
			if m.Name == tc.name {
				var err error
				if s, err = m.Build(spec.Spec{Placement: p, MicroBatches: 8, Memory: 2}); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			}
		}
		r, ok := construct.WithLatency(s, tc.budget)
		if tc.want == 0 {
			if ok {
				t.Errorf("%s, budget %d: kept, want left out", tc.name, tc.budget)
			}
			continue
		}
		if !ok {
			t.Errorf("%s, budget %d: left out", tc.name, tc.budget)
			continue
		}
		if r.Latency != tc.budget || verify.Schedule(r) != nil || len(r.Decisions) != len(s.Decisions) || schedule.MeasureLatency(r).Max > tc.budget {
			t.Errorf("%s, budget %d: verify %v, %d decisions of %d", tc.name, tc.budget, verify.Schedule(r), len(r.Decisions), len(s.Decisions))
		}
		if ms := schedule.Makespan(r); ms != tc.want {
			t.Errorf("%s, budget %d: makespan %d, want %d", tc.name, tc.budget, ms, tc.want)
		}
	}
}
