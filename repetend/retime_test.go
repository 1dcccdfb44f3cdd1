package repetend

import (
	"context"
	"testing"

	"tessel/placement"
)

// Retime gives a repetend's offsets their least period on another
// placement: on its own, the period the search found; with slower
// transfers, a period no shorter, that obeys the rule and reaches the
// offsets' solver-free bound where MinimizePeriod does. Offsets that do
// not fit the placement are an error; offsets over the budget, nil.
func TestRetime(t *testing.T) {
	ctx := context.Background()
	p := setTransfers(builtin(t, "v-shape", placement.Options{Devices: 4}), 1)
	found, err := Search(ctx, p, Options{Memory: 4, MaxNR: 4})
	if err != nil || found.Best == nil {
		t.Fatalf("search: %v %v", found, err)
	}
	b := found.Best
	same, err := Retime(ctx, p, b.NR, b.Offsets, 4, 0, 0, 0)
	if err != nil || same == nil || same.Period != b.Period {
		t.Fatalf("re-timed on its own placement: %+v %v, want period %d", same, err, b.Period)
	}
	slow := setTransfers(builtin(t, "v-shape", placement.Options{Devices: 4}), 5)
	r, err := Retime(ctx, slow, b.NR, b.Offsets, 4, 0, 0, 0)
	if err != nil || r == nil {
		t.Fatalf("re-timed with slower transfers: %v %v", r, err)
	}
	checkRule(t, "re-timed", slow, r)
	want, _, err := MinimizePeriod(ctx, slow, Candidate{NR: b.NR, Offsets: b.Offsets}, 4, 0, PeriodBound(slow, b.Offsets), upperPeriod(slow), 0)
	if err != nil || want == nil || r.Period != want.Period || r.Period < b.Period {
		t.Errorf("re-timed period %d, MinimizePeriod %v (%v), old %d", r.Period, want, err, b.Period)
	}
	if _, err := Retime(ctx, p, b.NR, b.Offsets[1:], 4, 0, 0, 0); err == nil {
		t.Error("offsets of another placement were taken")
	}
	if _, err := Retime(ctx, p, 1, b.Offsets, 4, 0, 0, 0); err == nil && maxOffset(b.Offsets) > 0 {
		t.Error("offsets beyond N_R were taken")
	}
	if r, err := Retime(ctx, p, b.NR, b.Offsets, 1, 0, 0, 0); err != nil || r != nil {
		t.Errorf("over a budget of 1: %+v %v, want nil", r, err)
	}
}
