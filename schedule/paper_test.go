package schedule

import (
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
)

// Tests that pin claims of the Tessel paper (HPCA 2024) about schedules,
// each with its reference.

// Reference: §III "Repetend" and "Schedule generalization", Fig. 4: the
// 1F1B schedule on 4 devices repeats the same blocks with every
// micro-batch index increased by one, and one more micro-batch is one
// more repetend, shifting what follows by the repetend's width.
func TestPaperOneF1BRepetendGeneralizes(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, ForwardTime: 1, BackwardTime: 1})
	prev := 0
	for n := 6; n <= 12; n++ {
		s := oneF1B(t, p, n, 0)
		s.Repetend = oneF1BRepetend(t, s)
		if err := Verify(s); err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		if want := n - s.Repetend.NR + 1; s.Repetend.Iterations != want {
			t.Errorf("N=%d: %d iterations, want N-N_R+1 = %d", n, s.Repetend.Iterations, want)
		}
		if ms := Makespan(s); n > 6 && ms-prev != s.Repetend.Period {
			t.Errorf("N=%d: one more micro-batch added %d to the makespan, want the period %d", n, ms-prev, s.Repetend.Period)
		}
		prev = Makespan(s)
	}
}

// Reference: §VI-B, Table II: "1F1B can achieve zero bubble rate under its
// V-Shape placement strategy" with numerous micro-batches. Its repetend
// bubble rate is 0, and the bubble rate of the whole schedule,
// (D-1)/(N+D-1), falls towards it as N grows.
func TestPaperOneF1BZeroBubble(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	if r := RepetendBubbleRate(p, LowerBounds(p, 1, 0).Period); r != 0 {
		t.Errorf("1F1B repetend bubble rate %v, want 0", r)
	}
	last := 1.0
	for _, n := range []int{4, 16, 64, 256} {
		r := Measure(oneF1B(t, p, n, 0)).BubbleRate
		if r >= last {
			t.Errorf("N=%d: bubble rate %v does not fall (was %v)", n, r, last)
		}
		last = r
	}
	if last > 0.012 {
		t.Errorf("bubble rate %v at N=256, want below 3/259", last)
	}
}
