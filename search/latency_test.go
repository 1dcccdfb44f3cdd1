package search

import (
	"context"
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// The Tessel paper (Lin et al., §VI-D) serves inference under a latency
// budget: every request (micro-batch) finishes within it, and the search
// maximises throughput (minimises the makespan of N) under it.

func chainInfer(t testing.TB) *placement.Placement {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLatencyChainCriticalPath: a forward-only chain of 4 stages, times 1,
// N = 8, with the budget equal to the critical path: every micro-batch's
// latency is the critical path, and the makespan is the time-optimal
// search's under the same budget (proven).
func TestLatencyChainCriticalPath(t *testing.T) {
	p := chainInfer(t)
	cp := p.CriticalPath()
	if cp != 4 {
		t.Fatalf("critical path %d, want 4", cp)
	}
	ctx := context.Background()
	res, err := Run(ctx, spec.Spec{Placement: p, MicroBatches: 8, Latency: cp}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if res.Schedule.Latency != cp {
		t.Fatalf("schedule records budget %d, want %d", res.Schedule.Latency, cp)
	}
	for _, l := range schedule.Latencies(res.Schedule) {
		if l.Latency != cp {
			t.Errorf("micro-batch %d: latency %d, want %d", l.Micro, l.Latency, cp)
		}
	}
	to, err := Optimal(ctx, spec.Spec{Placement: p, MicroBatches: 8, Latency: cp}, OptimalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !to.Solution.Proven {
		t.Fatalf("time-optimal search under the budget not proven")
	}
	if got, want := res.Makespan(), to.Solution.Makespan; got != want {
		t.Errorf("makespan %d under the budget, time-optimal %d", got, want)
	}
	if to.Schedule.Latency != cp || verify.Schedule(to.Schedule) != nil {
		t.Errorf("time-optimal schedule does not record or meet the budget")
	}
	// Without a budget: the same makespan as before budgets existed, and no budget recorded.
	free, err := Run(ctx, spec.Spec{Placement: p, MicroBatches: 8}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if free.Schedule.Latency != 0 || free.Makespan() != 11 {
		t.Errorf("without a budget: latency %d recorded, makespan %d, want 0 and 11", free.Schedule.Latency, free.Makespan())
	}
}

// TestLatencyBudgetBelowCriticalPath: one clear error.
func TestLatencyBudgetBelowCriticalPath(t *testing.T) {
	p := chainInfer(t)
	_, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Latency: 3}, Options{})
	if !errors.Is(err, ErrLatency) {
		t.Fatalf("got %v, want ErrLatency", err)
	}
	_, err = Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Latency: 3}, OptimalOptions{})
	if !errors.Is(err, ErrLatency) {
		t.Fatalf("optimal: got %v, want ErrLatency", err)
	}
}

// TestLatencyMatchesOptimal: where the budget binds (inference m-shape and
// nn-shape, 6 micro-batches), the search meets it in every micro-batch and
// ends when the time-optimal search under the same budget does.
func TestLatencyMatchesOptimal(t *testing.T) {
	for _, tc := range []struct {
		shape   string
		latency int
		want    int // the time-optimal makespan under the budget
	}{
		{"m-shape", 6, 19},
		{"m-shape", 7, 16},
		{"nn-shape", 8, 25},
	} {
		p, err := placement.Builtin(tc.shape, placement.Options{Devices: 4, Inference: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		res, err := Run(ctx, spec.Spec{Placement: p, MicroBatches: 6, Latency: tc.latency}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(res.Schedule); err != nil {
			t.Fatal(err)
		}
		if m := schedule.MeasureLatency(res.Schedule).Max; m > tc.latency {
			t.Errorf("%s, budget %d: max latency %d", tc.shape, tc.latency, m)
		}
		to, err := Optimal(ctx, spec.Spec{Placement: p, MicroBatches: 6, Latency: tc.latency}, OptimalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if to.Solution.Makespan != tc.want || !to.Solution.Proven || res.Makespan() != tc.want || !res.Proven() {
			t.Errorf("%s, budget %d: search %d (proven %v), time-optimal %d (proven %v), want %d",
				tc.shape, tc.latency, res.Makespan(), res.Proven(), to.Solution.Makespan, to.Solution.Proven, tc.want)
		}
	}
}
