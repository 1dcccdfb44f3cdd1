package compare

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

// Run on k-shape (the paper's Flava, Table II): 1F1B and Chimera-direct
// do not apply to it and run on their home placements, 1F1B+ has no
// adaptation (×), GPipe keeps every forward in flight and breaks the
// budget, Tessel finds a repetend without bubbles, and every schedule
// shown passed the verifier.
func TestRun(t *testing.T) {
	p, err := placement.Builtin("k-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := Run(context.Background(), p, Options{MicroBatches: 8, Memory: 6})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		placement, status string
		budget            bool
	}{
		"GPipe":          {"k-shape", StatusOK, false},
		"1F1B":           {"v-shape", StatusOK, true},
		"Chimera-direct": {"x-shape", StatusOK, true},
		"1F1B+":          {"k-shape", StatusNotApplicable, false},
		"Tessel":         {"k-shape", StatusOK, true},
	}
	for _, r := range cmp.Rows {
		w, ok := want[r.Method]
		if !ok {
			continue
		}
		delete(want, r.Method)
		if r.Placement != w.placement || r.Status != w.status {
			t.Errorf("%s: on %s, %s; want %s, %s", r.Method, r.Placement, r.Status, w.placement, w.status)
		}
		if r.Status == StatusOK && (*r.BudgetRespected != w.budget || r.Schedule == nil) {
			t.Errorf("%s: budget respected %v, schedule %v", r.Method, *r.BudgetRespected, r.Schedule != nil)
		}
		if r.Method == "Tessel" && (r.RepetendBubbleRate == nil || *r.RepetendBubbleRate != 0) {
			t.Errorf("Tessel: repetend bubble rate %v, want 0", r.RepetendBubbleRate)
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
}
