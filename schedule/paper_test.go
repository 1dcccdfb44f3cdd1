package schedule_test

import (
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
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
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		if want := n - s.Repetend.NR + 1; s.Repetend.Iterations != want {
			t.Errorf("N=%d: %d iterations, want N-N_R+1 = %d", n, s.Repetend.Iterations, want)
		}
		if ms := schedule.Makespan(s); n > 6 && ms-prev != s.Repetend.Period {
			t.Errorf("N=%d: one more micro-batch added %d to the makespan, want the period %d", n, ms-prev, s.Repetend.Period)
		}
		prev = schedule.Makespan(s)
	}
}

// Reference: §VI-B, Table II: "1F1B can achieve zero bubble rate under its
// V-Shape placement strategy" with numerous micro-batches. The steady state
// of a real 1F1B schedule (64 micro-batches, found in its start times by
// FindRepetend) keeps every device busy for its whole period, so its
// repetend bubble rate is 0, and the bubble rate of the whole schedule
// falls towards it as N grows.
func TestPaperOneF1BZeroBubble(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	s := oneF1B(t, p, 64, 0)
	rp := schedule.FindRepetend(s)
	if rp == nil {
		t.Fatal("1F1B of 64 micro-batches has no periodic stretch")
	}
	s.Repetend = rp
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	// Busy time of every device in one period of the steady state, from
	// the instances themselves.
	busy := make([]int, p.Devices)
	for _, in := range s.Instances {
		if in.Start >= rp.Start+rp.Period && in.Start < rp.Start+2*rp.Period {
			for _, d := range p.Blocks[in.Block].Devices {
				busy[d] += p.Blocks[in.Block].Time
			}
		}
	}
	for d, b := range busy {
		if b != rp.Period {
			t.Errorf("device %d busy %d of the period %d in 1F1B's steady state", d, b, rp.Period)
		}
	}
	if r := schedule.RepetendBubbleRate(p, rp.Period); r != 0 {
		t.Errorf("1F1B repetend bubble rate %v, want 0", r)
	}
	last := 1.0
	for _, n := range []int{4, 16, 64, 256} {
		r := schedule.Measure(oneF1B(t, p, n, 0)).BubbleRate
		if r >= last {
			t.Errorf("N=%d: bubble rate %v does not fall (was %v)", n, r, last)
		}
		last = r
	}
	if last > 0.012 {
		t.Errorf("bubble rate %v at N=256, want below 3/259", last)
	}
}
