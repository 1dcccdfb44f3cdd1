package construct

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Modulo schedules reserve links as they reserve devices. On v-shape with
// 4 devices and transfers of 8, each link carries 8 per micro-batch
// against a device load of 4: the period is the link's load, and the
// schedule of 32 micro-batches meets the link bound (f0 ends at 1, 32
// transfers of 8 on link 0→1, then f1's 55 to the end: 312).
func TestModuloOnLinks(t *testing.T) {
	p := placementtest.WithTransfers(placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}), 8, true)
	ps, err := Modulo(context.Background(), p, ModuloOptions{Memory: 8, MicroBatches: 32})
	if err != nil {
		t.Fatal(err)
	}
	if ps.Period != 8 {
		t.Errorf("period %d, want 8 (the link's load)", ps.Period)
	}
	s, err := ps.Schedule(spec.Spec{Placement: p, MicroBatches: 32, Memory: 8})
	if err != nil {
		t.Fatal(err)
	}
	if got, lb := schedule.Makespan(s), rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 32, Memory: 8}).Makespan; got != 312 || lb != 312 {
		t.Errorf("makespan %d and lower bound %d, want both 312", got, lb)
	}
}

// List schedules book each transfer on its links as its producer starts:
// every rule gives a schedule the verifier accepts with channels, where
// transfers queue (transfer 3 > forward time 1) and where group blocks
// send to several devices (m-shape).
func TestListOnLinks(t *testing.T) {
	for _, name := range []string{"v-shape", "x-shape", "m-shape", "nn-shape"} {
		p := placementtest.WithTransfers(placementtest.Builtin(t, name, placement.Options{Devices: 4}), 3, true)
		for _, rule := range Rules() {
			s, err := List(p, 12, ListOptions{Rule: rule, Memory: 8, Window: 4})
			if err != nil {
				t.Errorf("%s %v: %v", name, rule, err)
				continue
			}
			if err := verify.Schedule(s); err != nil {
				t.Errorf("%s %v: %v", name, rule, err)
			}
		}
		cands, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: 12, Memory: 8})
		if err != nil || len(cands) == 0 {
			t.Errorf("%s: portfolio: %d candidates, %v", name, len(cands), err)
		}
	}
}
