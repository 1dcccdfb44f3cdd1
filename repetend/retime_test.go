package repetend

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// Retime gives a repetend's offsets their least period on another
// placement: on its own, the period the search found; with slower
// transfers, a period no shorter, that obeys the rule and reaches the
// offsets' solver-free bound where MinimizePeriod does. Offsets that do
// not fit the placement are an error; offsets over the budget, nil.
func TestRetime(t *testing.T) {
	ctx := context.Background()
	p := setTransfers(placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}), 1)
	found, err := Search(ctx, spec.Spec{Placement: p, Memory: 4}, Options{MaxNR: 4})
	if err != nil || found.Best == nil {
		t.Fatalf("search: %v %v", found, err)
	}
	b := found.Best
	same, err := Retime(ctx, spec.Spec{Placement: p, Memory: 4}, Assignment{NR: b.NR, Offsets: b.Offsets}, PeriodOptions{})
	if err != nil || same == nil || same.Period != b.Period {
		t.Fatalf("re-timed on its own placement: %+v %v, want period %d", same, err, b.Period)
	}
	slow := setTransfers(placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}), 5)
	r, err := Retime(ctx, spec.Spec{Placement: slow, Memory: 4}, Assignment{NR: b.NR, Offsets: b.Offsets}, PeriodOptions{})
	if err != nil || r == nil {
		t.Fatalf("re-timed with slower transfers: %v %v", r, err)
	}
	checkRule(t, "re-timed", slow, r)
	want, _, err := MinimizePeriod(ctx, spec.Spec{Placement: slow, Memory: 4}, Assignment{NR: b.NR, Offsets: b.Offsets}, PeriodBound(slow, b.Offsets), upperPeriod(slow), PeriodOptions{})
	if err != nil || want == nil || r.Period != want.Period || r.Period < b.Period {
		t.Errorf("re-timed period %d, MinimizePeriod %v (%v), old %d", r.Period, want, err, b.Period)
	}
	if _, err := Retime(ctx, spec.Spec{Placement: p, Memory: 4}, Assignment{NR: b.NR, Offsets: b.Offsets[1:]}, PeriodOptions{}); err == nil {
		t.Error("offsets of another placement were taken")
	}
	if _, err := Retime(ctx, spec.Spec{Placement: p, Memory: 4}, Assignment{NR: 1, Offsets: b.Offsets}, PeriodOptions{}); err == nil && maxOffset(b.Offsets) > 0 {
		t.Error("offsets beyond N_R were taken")
	}
	if r, err := Retime(ctx, spec.Spec{Placement: p, Memory: 1}, Assignment{NR: b.NR, Offsets: b.Offsets}, PeriodOptions{}); err != nil || r != nil {
		t.Errorf("over a budget of 1: %+v %v, want nil", r, err)
	}
}

// slowLink is p with every transfer 1 and those between devices a and b
// taking c, as testdata/clusters/four-slow-link.json puts them (link 1–2
// ten times slower).
func slowLink(p *placement.Placement, a, b, c int) *placement.Placement {
	p = setTransfers(p, 1)
	for d := range p.Transfers {
		from, to := p.Blocks[d.From].Devices, p.Blocks[d.To].Devices
		if len(from) == 1 && len(to) == 1 && (from[0] == a && to[0] == b || from[0] == b && to[0] == a) {
			p.Transfers[d] = c
		}
	}
	return p
}

// Adapt repairs a repetend for a slower link without the solver. The old
// repetend is the one tessel search finds for x-shape, memory 4, N = 32,
// every transfer 1 (four-transfer-1.json): N_R 4, period 8, the load
// bound. Once link 1–2 takes 10 (four-slow-link.json) its offsets have a
// solver-free bound of 16, above the modulo schedule's period 15, so they
// could not start the solver lower. Adapt moves bd1 and bu1, the
// backward stages behind the slow link, one micro-batch later (bound 10),
// and the adapted offsets reach period 14: below the modulo schedule's,
// so the solver's search starts there (tessel replan then ends at 435 in
// a quarter of a second, a fresh search at 443 in 5 s, with period 13
// proven). The adapted offsets keep property 4.2 and N_R, and never have
// a higher bound.
func TestAdapt(t *testing.T) {
	ctx := context.Background()
	x := func() *placement.Placement { return placementtest.Builtin(t, "x-shape", placement.Options{Devices: 4}) }
	byID := map[string]int{"fd0": 3, "fd1": 3, "fd2": 2, "fd3": 2, "bd3": 2, "bd2": 1, "bd1": 1, "bd0": 0,
		"fu0": 3, "fu1": 3, "fu2": 2, "fu3": 2, "bu3": 2, "bu2": 1, "bu1": 1, "bu0": 0}
	p := setTransfers(x(), 1)
	offsets := make([]int, len(p.Blocks))
	for id, o := range byID {
		if i := p.Index(id); i >= 0 {
			offsets[i] = o
		} else {
			t.Fatalf("no block %q", id)
		}
	}
	if r, err := Retime(ctx, spec.Spec{Placement: p, Memory: 4, MicroBatches: 32}, Assignment{NR: 4, Offsets: offsets}, PeriodOptions{}); err != nil || r == nil || r.Period != 8 {
		t.Fatalf("the old repetend on its own cluster: %+v %v, want period 8", r, err)
	}
	slow := slowLink(x(), 1, 2, 10)
	adapted := Adapt(slow, 4, offsets)
	checkOffsets(t, slow, 4, adapted)
	if before, after := PeriodBound(slow, offsets), PeriodBound(slow, adapted); before != 16 || after >= before {
		t.Errorf("bound %d after Adapt, %d before (want 16)", after, before)
	}
	was, err := Retime(ctx, spec.Spec{Placement: slow, Memory: 4, MicroBatches: 32}, Assignment{NR: 4, Offsets: offsets}, PeriodOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now, err := Retime(ctx, spec.Spec{Placement: slow, Memory: 4, MicroBatches: 32}, Assignment{NR: 4, Offsets: adapted}, PeriodOptions{})
	if err != nil || now == nil {
		t.Fatalf("re-timing the adapted offsets: %v %v", now, err)
	}
	checkRule(t, "adapted", slow, now)
	if now.Period != 14 || was == nil || was.Period != 16 {
		t.Errorf("adapted offsets reach period %d, the old ones %+v; want 14 and 16", now.Period, was)
	}

	// Invariants on every candidate of N_R 3 of m- and nn-shape with one
	// slow link.
	for _, name := range []string{"m-shape", "nn-shape"} {
		p := slowLink(placementtest.Builtin(t, name, placement.Options{Devices: 4}), 1, 2, 10)
		n := 0
		Enumerate(ctx, p, 3, func(c Assignment) bool {
			a := Adapt(p, c.NR, c.Offsets)
			checkOffsets(t, p, c.NR, a)
			if PeriodBound(p, a) > PeriodBound(p, c.Offsets) {
				t.Fatalf("%s %v: Adapt raised the bound", name, c)
			}
			n++
			return n < 200
		})
	}
}

// checkOffsets fails unless offsets lie in 0..nr-1 and do not rise along
// any dependency (property 4.2).
func checkOffsets(t *testing.T, p *placement.Placement, nr int, offsets []int) {
	t.Helper()
	for i, o := range offsets {
		if o < 0 || o >= nr {
			t.Fatalf("offset %d of %s outside 0..%d", o, p.Blocks[i].ID, nr-1)
		}
	}
	for _, d := range p.Deps {
		if offsets[d.From] < offsets[d.To] {
			t.Fatalf("offsets rise along %s -> %s: %v", p.Blocks[d.From].ID, p.Blocks[d.To].ID, offsets)
		}
	}
}
