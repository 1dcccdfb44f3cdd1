package plan

import (
	"context"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// The plan against the baselines: every row on the placement searched,
// verified, one of VersusBaselines; the winner is the fastest that fits.
// Under a budget that holds the schedule back the levers run: recompute
// gives a verified plan that recomputes, offload an error where the
// model has no host link. Without a budget nothing binds and no lever
// runs.
func TestVersusAndLevers(t *testing.T) {
	pr := gptSplit(t)
	for _, tc := range []struct {
		budget int
		binds  bool
	}{{0, false}, {2, true}} {
		opt := Options{MicroBatches: 8, Budget: tc.budget}
		res, err := Run(context.Background(), pr, opt)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := Versus(context.Background(), res)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			t.Fatalf("budget %d: no baseline", tc.budget)
		}
		for _, r := range rows {
			if !slices.Contains(VersusBaselines(), baselineName(r.Method)) || r.Placement != res.Placement.Name || r.Status == compare.StatusNotApplicable {
				t.Errorf("budget %d: row %s on %s (%s)", tc.budget, r.Method, r.Placement, r.Status)
			}
			if r.Schedule != nil {
				if err := verify.Schedule(r.Schedule); err != nil || r.Schedule.Placement.Name != res.Placement.Name {
					t.Errorf("budget %d: %s: %v", tc.budget, r.Method, err)
				}
			}
		}
		if w := Winner(rows); w != nil {
			for _, r := range rows {
				if r.Status == compare.StatusOK && *r.BudgetRespected && *r.Makespan < *w.Makespan {
					t.Errorf("budget %d: winner %s (%d), but %s fits at %d", tc.budget, w.Method, *w.Makespan, r.Method, *r.Makespan)
				}
			}
		}
		if res.Binds() != tc.binds {
			t.Fatalf("budget %d: binds %v, want %v (makespan %d, peak %v)", tc.budget, res.Binds(), tc.binds, schedule.Makespan(res.Search.Schedule), schedule.Measure(res.Search.Schedule).PeakMemory)
		}
		levers, err := Levers(context.Background(), pr, opt, res)
		if err != nil {
			t.Fatal(err)
		}
		if !tc.binds {
			if levers != nil {
				t.Errorf("budget %d: levers %v where nothing binds", tc.budget, levers)
			}
			continue
		}
		if len(levers) != 2 || levers[0].Flag != "--recompute" || levers[1].Flag != "--offload" {
			t.Fatalf("levers %+v", levers)
		}
		rec := levers[0]
		if rec.Err != nil || !rec.Result.Decisions || verify.Schedule(rec.Result.Search.Schedule) != nil {
			t.Errorf("--recompute: %+v", rec)
		}
		if levers[1].Err == nil {
			t.Errorf("--offload on a model without a host link: no error")
		}
	}
}

// baselineName is the baseline of a row's title.
func baselineName(title string) string {
	for _, n := range VersusBaselines() {
		if compare.MethodTitle(n) == title {
			return n
		}
	}
	return title
}
