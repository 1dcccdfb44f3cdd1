package schedule_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// chain4 is a forward-only chain of 4 stages, time 1 each (an inference
// pipeline, the Tessel paper's §VI-D setting in small).
func chain4(t testing.TB) *placement.Placement {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gpipeStarts runs micro-batch m's stage i at m + i, or, with stall,
// its first stage at once and the rest after all first stages.
func chainSchedule(p *placement.Placement, n int, stall bool) *schedule.Schedule {
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}}
	for m := range n {
		for i := range 4 {
			start := m + i
			if stall && i > 0 {
				start = n + m + i - 1
			}
			s.Instances = append(s.Instances, schedule.Instance{Block: i, Micro: m, Start: start})
		}
	}
	return s
}

func TestVerifyLatency(t *testing.T) {
	p := chain4(t)
	for _, tc := range []struct {
		name   string
		s      *schedule.Schedule
		budget int
		want   string // "" when valid
	}{
		{"pipeline at the critical path", chainSchedule(p, 4, false), 4, ""},
		{"no budget", chainSchedule(p, 4, true), 0, ""},
		{"stalled", chainSchedule(p, 4, true), 6, "latency of micro-batch 0 is 7 > budget 6: f0^0 starts at 0, f3^0 ends at 7"},
	} {
		tc.s.Latency = tc.budget
		err := verify.Schedule(tc.s)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ve *schedule.VerifyError
		if !errors.As(err, &ve) || ve.Violations[0].Kind != schedule.Latency || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a latency violation %q", tc.name, err, tc.want)
		}
	}
	s := chainSchedule(p, 2, false)
	s.Latency = -1
	if err := verify.Schedule(s); err == nil || !strings.Contains(err.Error(), "latency budget -1 is negative") {
		t.Errorf("negative budget: %v", err)
	}
}

func TestMeasureLatency(t *testing.T) {
	p := chain4(t)
	st := schedule.MeasureLatency(chainSchedule(p, 4, true))
	// Latencies 7, 7, 7, 7: stage 0 at m, stage 3 ends at 4 + m + 3.
	if st.Max != 7 || st.Mean != 7 {
		t.Errorf("stalled: %+v, want max and mean 7", st)
	}
	st = schedule.MeasureLatency(chainSchedule(p, 8, false))
	if st.Max != 4 || st.Mean != 4 || st.Throughput != 1 {
		t.Errorf("pipeline: %+v, want latency 4, throughput 1", st)
	}
}

// TestCompactLatency: compaction under a budget delays each micro-batch's
// first block only as much as the budget asks; an order that meets no
// budget is an error.
func TestCompactLatency(t *testing.T) {
	p := chain4(t)
	stalled := chainSchedule(p, 4, true)
	orders := schedule.Orders(stalled)
	for _, budget := range []int{0, 4, 5, 7} {
		insC, err := compact.Compact(spec.Spec{Placement: p, MicroBatches: 4, Latency: budget}, compact.Keep{Orders: orders})
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		ins := insC.Instances
		s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 4, Latency: budget}, Instances: ins}
		if err := verify.Schedule(s); err != nil {
			t.Errorf("budget %d: %v", budget, err)
		}
	}
	// Device 0 runs every micro-batch before device 1 starts: with the
	// budget at the critical path these orders still fit (one micro-batch
	// after another on every device).
	insC, err := compact.Compact(spec.Spec{Placement: p, MicroBatches: 4, Latency: 4}, compact.Keep{Orders: orders})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	if ms := schedule.Makespan(&schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 4}, Instances: ins}); ms != 7 {
		t.Errorf("makespan %d, want 7", ms)
	}
	// Two blocks on one device of one micro-batch ordered far apart: no
	// budget below their distance fits.
	q := &placement.Placement{Name: "two", Devices: 1, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
		{ID: "b", Kind: placement.Forward, Devices: []int{0}, Time: 1},
	}, Deps: []placement.Dep{{From: 0, To: 1}}}
	o := [][]schedule.Ref{{{0, 0}, {0, 1}, {1, 0}, {1, 1}}}
	if _, err := compact.Compact(spec.Spec{Placement: q, MicroBatches: 2, Latency: 2}, compact.Keep{Orders: o}); err == nil {
		t.Errorf("a0 a1 b0 b1 within latency 2: want an error")
	}
	if _, err := compact.Compact(spec.Spec{Placement: q, MicroBatches: 2, Latency: 3}, compact.Keep{Orders: o}); err != nil {
		t.Errorf("within latency 3: %v", err)
	}
}

// TestLatencyFile: the schedule file records the budget, and Verify
// re-checks it after Parse.
func TestLatencyFile(t *testing.T) {
	p := chain4(t)
	s := chainSchedule(p, 3, false)
	s.Latency = 4
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "schedules", "latency.json")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("file differs from %s:\n%s", golden, buf.Bytes())
	}
	back, err := schedule.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if back.Latency != 4 || verify.Schedule(back) != nil {
		t.Errorf("parsed budget %d, verify %v", back.Latency, verify.Schedule(back))
	}
	back.Latency = 3
	if verify.Schedule(back) == nil {
		t.Errorf("budget 3 verified")
	}
	bad := strings.Replace(buf.String(), `"latency_budget": 4`, `"latency_budget": -2`, 1)
	if _, err := schedule.Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "latency_budget") {
		t.Errorf("negative budget in a file: %v", err)
	}
}
