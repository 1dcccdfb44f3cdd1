package schedule_test

import (
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// setTransfers gives the n-th dependency of p between blocks on different
// devices the transfer time c(n), as a cluster would.
func setTransfers(p *placement.Placement, c func(n int) int) {
	p.Transfers = map[placement.Dep]int{}
	for n, d := range p.Deps {
		if !p.Shares(d.From, d.To) {
			p.Transfers[d] = c(n)
		}
	}
}

// The verifier reads the dependency rule from the placement: with a
// transfer time, a consumer that starts right at its producer's end is
// too early, and the message names the dependency and the transfer.
func TestVerifyTransfer(t *testing.T) {
	f0f1 := placement.Dep{From: 0, To: 1} // v2: f0 on device 0, f1 on device 1
	tests := []struct {
		name      string
		transfers map[placement.Dep]int
		edit      func(t *testing.T, s *schedule.Schedule) *schedule.Schedule
		first     string // the first violation's message; "" when valid
	}{
		{"zero transfer", map[placement.Dep]int{f0f1: 0}, nil, ""},
		// v2's 1F1B runs f1^0 at 1, right when f0^0 ends.
		{"consumer at the producer's end", map[placement.Dep]int{f0f1: 1}, nil,
			"dependency f0 -> f1 broken for micro-batch 0: f0^0 ends at 1 and its transfer takes 1, f1^0 starts at 1 < 2"},
		{"consumer after the transfer", map[placement.Dep]int{f0f1: 1},
			func(t *testing.T, s *schedule.Schedule) *schedule.Schedule {
				// Device 1 waits one unit for f0^0's tensor and runs
				// everything one unit later; device 0's backwards follow.
				set(t, s, "f1", 0, 2)
				set(t, s, "b1", 0, 3)
				set(t, s, "b0", 0, 6)
				set(t, s, "f1", 1, 6)
				set(t, s, "b1", 1, 7)
				return set(t, s, "b0", 1, 10)
			}, ""},
		{"longer transfer", map[placement.Dep]int{f0f1: 3}, nil,
			"dependency f0 -> f1 broken for micro-batch 0: f0^0 ends at 1 and its transfer takes 3, f1^0 starts at 1 < 4"},
		// Without a transfer the message is the one it always was.
		{"no transfer", nil, func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { return set(t, s, "f1", 0, 0) },
			"dependency f0 -> f1 broken for micro-batch 0: f0^0 ends at 1, f1^0 starts at 0"},
		{"transfer on a shared device", map[placement.Dep]int{{From: 1, To: 2}: 1}, nil,
			`invalid placement: placement "v-shape": dep 1: transfer f1 -> b1: time 1 between blocks that share a device (must be 0)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := v2(t)
			s.Placement.Transfers = tc.transfers
			if tc.edit != nil {
				s = tc.edit(t, s)
			}
			err := verify.Schedule(s)
			if tc.first == "" {
				if err != nil {
					t.Fatalf("Verify = %v, want nil", err)
				}
				return
			}
			var ve *schedule.VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want a *VerifyError", err)
			}
			if got := ve.Violations[0].Message; got != tc.first {
				t.Errorf("first violation %q, want %q", got, tc.first)
			}
		})
	}
}

// Compaction and the verifier agree on the rule: compacted 1F1B orders pass,
// each consumer waits exactly its transfer, and one unit earlier fails.
func TestCompactTransfers(t *testing.T) {
	for _, c := range []int{0, 1, 2, 5} {
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
		setTransfers(p, func(int) int { return c })
		n := 8
		insC, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: oneF1BOrders(t, p, n)})
		if err != nil {
			t.Fatal(err)
		}
		ins := insC.Instances
		s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}, Instances: ins}
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("transfer %d: compacted 1F1B: %v", c, err)
		}
		start := map[schedule.Ref]int{}
		for _, in := range ins {
			start[in.Ref()] = in.Start
		}
		// The first micro-batch runs alone down the pipeline: every
		// forward starts its producer's time plus the transfer later.
		f0, f1 := block(t, p, "f0"), block(t, p, "f1")
		if got, want := start[schedule.Ref{f1, 0}], start[schedule.Ref{f0, 0}]+p.Blocks[f0].Time+c; got != want {
			t.Errorf("transfer %d: f1^0 starts at %d, want %d", c, got, want)
		}
		if c == 0 {
			continue
		}
		s.Instances = append([]schedule.Instance(nil), ins...)
		set(t, s, "f1", 0, start[schedule.Ref{f1, 0}]-1)
		var ve *schedule.VerifyError
		if err := verify.Schedule(s); !errors.As(err, &ve) || ve.Violations[0].Kind != schedule.Dependency {
			t.Errorf("transfer %d: f1^0 one unit early: Verify = %v, want a dependency violation", c, err)
		}
	}
}
