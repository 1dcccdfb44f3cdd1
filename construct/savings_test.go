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

// On the V placement one micro-batch holds two activations on device 0:
// at memory 1 no list schedule keeps them all, and every policy that
// offloads or recomputes finds one (Qi et al., "OptPipe", §3: memory as a
// decision), verified.
func TestListSavings(t *testing.T) {
	v2 := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true}).WithOffload(1).WithRecompute()
	if _, err := List(v2, 8, ListOptions{Rule: GradientFirst, Memory: 1}); err == nil {
		t.Fatalf("a list schedule that keeps every activation fits memory 1")
	}
	lb := rules.LowerBounds(spec.Spec{Placement: v2, MicroBatches: 8, Memory: 1}).Makespan
	for _, sv := range policies(spec.Decisions{Offload: true, Recompute: true}) {
		for _, rule := range Rules() {
			s, err := List(v2, 8, ListOptions{Rule: rule, Memory: 1, Savings: sv})
			if err != nil {
				t.Errorf("%s, %s: %v", sv, rule, err)
				continue
			}
			if err := verify.Schedule(s); err != nil {
				t.Fatalf("%s, %s: %v", sv, rule, err)
			}
			if ms := schedule.Makespan(s); ms < lb {
				t.Errorf("%s, %s: makespan %d below the lower bound %d", sv, rule, ms, lb)
			}
			off, rec := s.Count()
			if off+rec == 0 {
				t.Errorf("%s, %s: no decision at memory 1", sv, rule)
			}
			if (!sv.Offload && off > 0) || (!sv.Recompute && rec > 0) {
				t.Errorf("%s, %s: %d offloaded, %d recomputed", sv, rule, off, rec)
			}
		}
	}
}

// With offload the portfolio beats every schedule that keeps the
// activations at a tight budget, and its candidates are sorted.
func TestPortfolioWithOffload(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, SplitBackward: true}).WithOffload(1)
	keep, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: 16, Memory: 2})
	if err != nil {
		t.Fatal(err)
	}
	with, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: 16, Memory: 2, Allowed: spec.Decisions{Offload: true}})
	if err != nil {
		t.Fatal(err)
	}
	if with[0].Makespan >= keep[0].Makespan || len(with[0].Schedule.Decisions) == 0 {
		t.Errorf("with offload %d (%s), keeping %d (%s)", with[0].Makespan, with[0].Name, keep[0].Makespan, keep[0].Name)
	}
	for k := 1; k < len(with); k++ {
		if with[k].Makespan < with[k-1].Makespan {
			t.Fatalf("candidates not sorted at %d", k)
		}
	}
}
