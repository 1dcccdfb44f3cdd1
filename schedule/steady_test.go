package schedule_test

import (
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// chainOnOne is a chain of blocks a → b → … on device 0, each of time 1.
func chainOnOne(ids ...string) *placement.Placement {
	p := &placement.Placement{Name: "chain", Devices: 1}
	for i, id := range ids {
		p.Blocks = append(p.Blocks, placement.Block{ID: id, Kind: placement.Forward, Devices: []int{0}, Time: 1})
		if i > 0 {
			p.Deps = append(p.Deps, placement.Dep{From: i - 1, To: i})
		}
	}
	return p
}

func TestSteady(t *testing.T) {
	const n = 12
	// One block, micro-batches in pairs: 0 1 . 3 4 . 6 7 …: period 3 for
	// 2 micro-batches, a third idle.
	pairs := &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("a"), MicroBatches: n}}
	for m := range n {
		pairs.Instances = append(pairs.Instances, schedule.Instance{Block: 0, Micro: m, Start: m/2*3 + m%2})
	}
	// Two blocks: every a first, then every b: two stretches of period 1
	// one after another, 2 per micro-batch, no idle time.
	phases := &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("a", "b"), MicroBatches: n}}
	for m := range n {
		phases.Instances = append(phases.Instances, schedule.Instance{Block: 0, Micro: m, Start: m}, schedule.Instance{Block: 1, Micro: m, Start: n + m})
	}
	v := placementtest.Builtin(t, "v-shape", placement.Options{})
	for _, c := range []struct {
		name                                   string
		s                                      *schedule.Schedule
		period, perPeriod, nr, stretches, iter int
		rate                                   float64
	}{
		{"1F1B", oneF1B(t, v, 16, 0), 4, 1, 4, 1, 11, 0},
		{"pairs", pairs, 3, 2, 2, 1, 6, 1.0 / 3},
		{"phases", phases, 2, 1, 1, 2, 12, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := verify.Schedule(c.s); err != nil {
				t.Fatal(err)
			}
			st := schedule.Steady(c.s)
			if st == nil {
				t.Fatal("no steady state")
			}
			if st.Period != c.period || st.PerPeriod != c.perPeriod || st.NR != c.nr || len(st.Stretches) != c.stretches ||
				st.Main.Iterations != c.iter || st.BubbleRate != c.rate {
				t.Errorf("steady state %+v, want period %d for %d, N_R %d, %d stretches, %d iterations, bubble rate %v",
					st, c.period, c.perPeriod, c.nr, c.stretches, c.iter, c.rate)
			}
		})
	}
	// Too few micro-batches, or nothing that repeats: none.
	if st := schedule.Steady(oneF1B(t, v, 2, 0)); st != nil {
		t.Errorf("2 micro-batches: %+v", st)
	}
	// A schedule's recorded repetend is its steady state (SteadyOf), with
	// N_R counted in its window.
	s := oneF1B(t, v, 16, 0)
	s.Repetend = schedule.FindRepetend(s)
	if s.Repetend == nil {
		t.Fatal("1F1B: no repetend")
	}
	if st := schedule.SteadyOf(s); st == nil || st.Period != s.Repetend.Period || st.NR != s.Repetend.Span() || st.BubbleRate != 0 {
		t.Errorf("SteadyOf %+v, repetend %+v", st, s.Repetend)
	}
}

func TestRepetendSpan(t *testing.T) {
	for _, c := range []struct {
		offsets []int
		want    int
	}{{[]int{3, 3, 2, 1}, 3}, {[]int{0}, 1}, {nil, 0}} {
		if got := (&schedule.Repetend{Offsets: c.offsets}).Span(); got != c.want {
			t.Errorf("Span(%v) = %d, want %d", c.offsets, got, c.want)
		}
	}
}

// TestResize: a schedule whose steady state repeats (1F1B on the v-shape)
// resized to more and to fewer micro-batches is that schedule of more
// or fewer micro-batches: valid, and longer or shorter by the period
// for each micro-batch.
func TestResize(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	var orders [][]schedule.Ref
	n := 16
	for d := range 4 {
		var o []schedule.Ref
		f, b := d, 7-d
		warm := min(4-d, n)
		for m := range warm {
			o = append(o, schedule.Ref{Block: f, Micro: m})
		}
		for m := range n {
			o = append(o, schedule.Ref{Block: b, Micro: m})
			if warm+m < n {
				o = append(o, schedule.Ref{Block: f, Micro: warm + m})
			}
		}
		orders = append(orders, o)
	}
	c, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: orders})
	if err != nil {
		t.Fatal(err)
	}
	s := &schedule.Schedule{Spec: spec.New(p, n), Instances: c.Instances}
	r := schedule.FindRepetend(s)
	if r == nil {
		t.Fatal("no repetend")
	}
	for _, m := range []int{n + 10, n - 5, r.Iterations} {
		got, err := compact.Resize(s, r, m)
		if err != nil {
			t.Fatalf("%d micro-batches: %v", m, err)
		}
		if want := schedule.Makespan(s) + (m-n)*r.Period; schedule.Makespan(got) != want {
			t.Errorf("%d micro-batches: makespan %d, want %d", m, schedule.Makespan(got), want)
		}
	}
	if _, err := compact.Resize(s, r, n-r.Iterations+1); err == nil {
		t.Error("resized below two iterations")
	}
}
