package repetend

// Tests that pin the Tessel paper's claims about repetends. Each cites
// where the claim comes from.

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Reference: §IV-B, property 4.2 — offsets never increase along a
// dependency; and eq. 3 — every block exactly once, offsets in [0, N_R).
// Enumerate yields exactly the vectors a brute force over all N_R^K
// assignments keeps, each once.
func TestPaperProperty42EnumerationIsExactlyThePrunedSpace(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  placement.Options
		nr   int
	}{
		{"v-shape", placement.Options{Devices: 3}, 3},
		{"x-shape", placement.Options{Devices: 2}, 3},
		{"k-shape", placement.Options{Devices: 2}, 3},
		{"m-shape", placement.Options{Devices: 2}, 2},
	} {
		p := placementtest.Builtin(t, c.name, c.opt)
		want := map[string]bool{}
		offs := make([]int, p.K())
		var rec func(i int)
		rec = func(i int) {
			if i == len(offs) {
				lo, hi := c.nr, -1
				for _, o := range offs {
					lo, hi = min(lo, o), max(hi, o)
				}
				for _, d := range p.Deps {
					if offs[d.From] < offs[d.To] {
						return
					}
				}
				if lo == 0 && hi == c.nr-1 {
					want[fmt.Sprint(offs)] = true
				}
				return
			}
			for v := 0; v < c.nr; v++ {
				offs[i] = v
				rec(i + 1)
			}
		}
		rec(0)
		got := map[string]bool{}
		Enumerate(context.Background(), p, c.nr, func(cd Assignment) bool {
			k := fmt.Sprint(cd.Offsets)
			if got[k] {
				t.Errorf("%s: candidate %s enumerated twice", c.name, k)
			}
			got[k] = true
			return true
		})
		if len(got) != len(want) {
			t.Errorf("%s N_R=%d: %d candidates, brute force keeps %d", c.name, c.nr, len(got), len(want))
		}
		for k := range want {
			if !got[k] {
				t.Errorf("%s: candidate %s missing", c.name, k)
			}
		}
	}
}

// expand runs a repetend for iters iterations and checks eq. 4's promise:
// dependencies across iterations hold and no device runs two blocks at
// once. It is independent of the encoder.
func expand(t *testing.T, p *placement.Placement, r *Repetend, iters int) {
	t.Helper()
	start := map[schedule.Ref]int{}
	for k := 0; k < iters; k++ {
		for i := range p.Blocks {
			start[schedule.Ref{Block: i, Micro: r.Offsets[i] + k}] = r.Starts[i] + k*r.Period
		}
	}
	for ref, s := range start {
		for _, d := range p.Deps {
			if d.From != ref.Block {
				continue
			}
			if s2, ok := start[schedule.Ref{Block: d.To, Micro: ref.Micro}]; ok && s+p.Blocks[d.From].Time > s2 {
				t.Fatalf("%s: %s^%d ends at %d after %s^%d starts at %d", p.Name, p.Blocks[d.From].ID, ref.Micro, s+p.Blocks[d.From].Time, p.Blocks[d.To].ID, ref.Micro, s2)
			}
		}
	}
	for dev := 0; dev < p.Devices; dev++ {
		busy := map[int]string{}
		for ref, s := range start {
			if !p.OnDevice(ref.Block, dev) {
				continue
			}
			for u := s; u < s+p.Blocks[ref.Block].Time; u++ {
				if other, ok := busy[u]; ok {
					t.Fatalf("%s: device %d runs %s and %s^%d at %d", p.Name, dev, other, p.Blocks[ref.Block].ID, ref.Micro, u)
				}
				busy[u] = fmt.Sprintf("%s^%d", p.Blocks[ref.Block].ID, ref.Micro)
			}
		}
	}
}

// Reference: §VI-C, Fig. 11 — with memory unconstrained, V-shape reaches a
// zero bubble rate from N_R = 4 (the number of devices), M- and NN-shape
// from N_R = 6; fewer micro-batches leave bubbles.
func TestPaperFig11ZeroBubbleNR(t *testing.T) {
	testskip.Short(t, "solver-heavy")
	for _, c := range []struct {
		name string
		zero int // least N_R with a zero-bubble repetend
	}{{"v-shape", 4}, {"m-shape", 6}, {"nn-shape", 6}} {
		p := placementtest.Builtin(t, c.name, placement.Options{})
		for _, nr := range []int{c.zero - 1, c.zero} {
			r, err := Search(context.Background(), spec.Spec{Placement: p}, Options{MaxNR: nr, Strategy: StrategyJoint})
			if err != nil || r.Best == nil {
				t.Fatalf("%s N_R ≤ %d: %v", c.name, nr, err)
			}
			rate := schedule.RepetendBubbleRate(p, r.Best.Period)
			if nr == c.zero && rate != 0 {
				t.Errorf("%s N_R ≤ %d: repetend bubble rate %.3f, want 0", c.name, nr, rate)
			}
			if nr < c.zero && rate == 0 {
				t.Errorf("%s N_R ≤ %d: zero bubbles already (the paper needs %d)", c.name, nr, c.zero)
			}
			if !r.Proven {
				t.Errorf("%s N_R ≤ %d: not proven", c.name, nr)
			}
			expand(t, p, r.Best, r.Best.NR+3)
		}
	}
}

// Reference: §IV-B, Algorithm 1 lines 5 and 23 — GetLowerBound is the
// largest per-device load of one micro-batch, and reaching it ends the
// search at once.
func TestPaperLowerBoundEndsTheSearch(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	r, err := Search(context.Background(), spec.Spec{Placement: p}, Options{MaxNR: 6, Strategy: StrategyEnumerate, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.LowerBound != 4 || r.Best.Period != 4 || !r.Proven {
		t.Fatalf("lower bound %d, period %d, proven %v; want 4, 4, true", r.LowerBound, r.Best.Period, r.Proven)
	}
	if r.Best.NR != 4 {
		t.Errorf("N_R %d, want 4: the search must stop at the first N_R that reaches the bound", r.Best.NR)
	}
}
