package schedule_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// The verifier checks the latency rule and the decisions together: a
// micro-batch's latency runs from its first block's start to its last
// block's end, offloads, reloads and recomputes lying inside it (Lin et
// al., Tessel, §VI-D; Qi et al., OptPipe, Appendix C).
func TestVerifyLatencyDecisions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      *schedule.Schedule
		budget int
		want   []string // kind: message; none when valid
	}{
		{"offload within the budget", decide(t, two(t), "f0", 0, placement.Offload, 1, 2), 7, nil},
		{"recompute within the budget", decide(t, two(t), "f0", 0, placement.Recompute, 2, 0), 7, nil},
		{"offload over the budget", decide(t, two(t), "f0", 0, placement.Offload, 1, 2), 6, []string{
			"latency: latency of micro-batch 0 is 7 > budget 6: f0^0 starts at 0, w0^0 ends at 7",
			"latency: latency of micro-batch 1 is 7 > budget 6: f0^1 starts at 1, w0^1 ends at 8",
		}},
		{"recompute delays the consumer past the budget", decide(t, loose(t), "f0", 0, placement.Recompute, 6, 0), 9, []string{
			"latency: latency of micro-batch 0 is 10 > budget 9: f0^0 starts at 0, w0^0 ends at 10",
			"latency: latency of micro-batch 1 is 10 > budget 9: f0^1 starts at 1, w0^1 ends at 11",
		}},
		{"a reload too late and the budget exceeded", decide(t, two(t), "f0", 0, placement.Offload, 1, 4), 6, []string{
			"offload: reload of f0^0 ends at 5 > 4, when i0^0 starts",
			"latency: latency of micro-batch 0 is 7 > budget 6: f0^0 starts at 0, w0^0 ends at 7",
			"latency: latency of micro-batch 1 is 7 > budget 6: f0^1 starts at 1, w0^1 ends at 8",
		}},
	} {
		tc.s.Latency = tc.budget
		err := verify.Schedule(tc.s)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ve *schedule.VerifyError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a VerifyError", tc.name, err)
			continue
		}
		var got []string
		for _, v := range ve.Violations {
			got = append(got, string(v.Kind)+": "+v.Message)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// CompactDecisionsLatency keeps the decisions and every order
// CompactDecisions keeps, and delays each micro-batch's first block as far
// as the budget asks; orders that meet no schedule within it are an error.
// Device 1 runs micro-batch 0's blocks before micro-batch 1's: with its
// first forward at 1, micro-batch 1 takes 7; at budget 6 it starts at 2,
// its offload moving with it (3, reloaded at 5); with a recompute in
// device 0's order between the two micro-batches' backwards, no delay
// brings it to 6.
func TestCompactDecisionsLatency(t *testing.T) {
	base := func() *schedule.Schedule {
		return split2(t, map[string][]int{"f0": {0, 1}, "f1": {1, 4}, "i1": {2, 5}, "w1": {3, 6}, "i0": {3, 6}, "w0": {4, 7}})
	}
	offload := decide(t, base(), "f0", 1, placement.Offload, 2, 4)
	recompute := decide(t, decide(t, base(), "f0", 0, placement.Offload, 1, 2), "f0", 1, placement.Recompute, 5, 0)
	for _, tc := range []struct {
		name   string
		s      *schedule.Schedule
		budget int
		want   []int // the starts of f0^1, its decision and its reload; nil: an error
	}{
		{"offload, no budget", offload, 0, []int{1, 2, 4}},
		{"offload, budget 7", offload, 7, []int{1, 2, 4}},
		{"offload, budget 6", offload, 6, []int{2, 3, 5}},
		{"offload, budget 5", offload, 5, nil},
		{"recompute, budget 7", recompute, 7, []int{1, 5, 0}},
		{"recompute, budget 6", recompute, 6, nil},
	} {
		sp := tc.s.Spec
		sp.Latency = tc.budget
		c, err := compact.Compact(sp, compact.Keep{From: tc.s})
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), "meet no latency budget") {
				t.Errorf("%s: %v, want an error", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Latency != tc.budget || verify.Schedule(c) != nil {
			t.Errorf("%s: %d recorded, verify %v", tc.name, c.Latency, verify.Schedule(c))
		}
		if len(c.Decisions) != len(tc.s.Decisions) || schedule.Makespan(c) != 8 {
			t.Errorf("%s: %d decisions, makespan %d, want %d and 8", tc.name, len(c.Decisions), schedule.Makespan(c), len(tc.s.Decisions))
		}
		f01 := 0
		for _, in := range c.Instances {
			if in.Block == block(t, c.Placement, "f0") && in.Micro == 1 {
				f01 = in.Start
			}
		}
		d := c.Decisions[len(c.Decisions)-1]
		if got := []int{f01, d.Start, d.Reload}; !slices.Equal(got, tc.want) {
			t.Errorf("%s: f0^1 and its decision at %v, want %v", tc.name, got, tc.want)
		}
		if mc, ms := schedule.Measure(c).PeakMemory, schedule.Measure(tc.s).PeakMemory; mc[0] > ms[0] || mc[1] > ms[1] {
			t.Errorf("%s: peak memory %v, %v before", tc.name, mc, ms)
		}
	}
}
