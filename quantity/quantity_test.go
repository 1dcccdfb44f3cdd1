package quantity

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for name, want := range map[string]float64{"s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9} {
		if got, err := ParseTime(name); err != nil || got != want {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	for name, want := range map[string]float64{"B": 1, "MB": 1e6, "GB": 1e9, "GiB": 1 << 30, "MiB": 1 << 20} {
		if got, err := ParseMemory(name); err != nil || got != want {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	if _, err := ParseTime("hours"); err == nil || err.Error() != `unknown time unit "hours" (want one of ns, us, µs, ms, s)` {
		t.Errorf("hours: %v", err)
	}
	if _, err := ParseMemory("Gb"); err == nil || !strings.Contains(err.Error(), "want one of B, kB, KiB, MB, MiB, GB, GiB, TB, TiB") {
		t.Errorf("Gb: %v", err)
	}
}

// One way of writing times and memories everywhere: s from a second, ms
// from 10 µs, decimal GB and MB.
func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		sec  float64
		want string
	}{{2.6305, "2.631 s"}, {0.069, "69.00 ms"}, {0.00016977, "0.17 ms"}, {0.000011, "0.011 ms"}, {3.2e-6, "3.2 µs"}, {0, "0 ms"}} {
		if got := Seconds(tc.sec); got != tc.want {
			t.Errorf("Seconds(%g) = %q, want %q", tc.sec, got, tc.want)
		}
	}
	for _, tc := range []struct {
		b    float64
		want string
	}{{18.79e9, "18.79 GB"}, {67108864, "67.1 MB"}, {33000, "33.0 kB"}, {12, "12 B"}} {
		if got := Bytes(tc.b); got != tc.want {
			t.Errorf("Bytes(%g) = %q, want %q", tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct {
		sec  float64
		want string
	}{{0.003, "3 ms"}, {2e-6, "2 µs"}, {0.0005, "500 µs"}, {1.5, "1.5 s"}, {1e-10, "0.1 ns"}} {
		if got := Step(tc.sec); got != tc.want {
			t.Errorf("Step(%g) = %q, want %q", tc.sec, got, tc.want)
		}
	}
	s := &Scale{Time: "ms", Step: 0.002, MemoryBytes: 1 << 26, Search: 1500}
	if got := s.Duration(1315265); got != "2.631 s" {
		t.Errorf("Duration %q", got)
	}
	if got := s.StepText(1500); got != "3 ms" {
		t.Errorf("StepText %q", got)
	}
	if got := s.Memories([]int{280, 43}); got != "[18.79 GB, 2.89 GB]" {
		t.Errorf("Memories %q", got)
	}
	unnamed := &Scale{Step: 0.01}
	if got := unnamed.Duration(22320); got != "223.2" || unnamed.Named() || !unnamed.HasTime() || unnamed.HasMemory() {
		t.Errorf("a model without a named unit: %q", got)
	}
	var none *Scale
	if got := none.Duration(681); got != "681 steps" || none.Memories([]int{4, 3}) != "[4 3]" || none.SearchStep() != 1 {
		t.Errorf("no scale: %q %q", got, none.Memories([]int{4, 3}))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Scale
		want string
	}{
		{Scale{Time: "ms", Step: 0.002, Search: 1500, MemoryBytes: 1 << 26}, ""},
		{Scale{Step: 0.01}, ""},
		{Scale{MemoryBytes: 1e9}, ""},
		{Scale{}, `give "step", "memory_bytes" or both`},
		{Scale{Time: "ms"}, `"time" needs "step"`},
		{Scale{Time: "minutes", Step: 1}, `unknown time unit "minutes"`},
		{Scale{Step: -1}, "step: want"},
		{Scale{Search: 3, MemoryBytes: 1}, `"search_step" needs "step"`},
		{Scale{Step: 1, Search: -2}, "search_step: want 1..1000000"},
		{Scale{Step: 1, MemoryBytes: -1}, "memory_bytes: want"},
	} {
		err := tc.s.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

// The step of a placement made from a model: every block within a 200th
// of the shortest (so that a makespan, a chain of blocks with at most one
// transfer between two, moves by at most 0.5 %), every transfer within a
// 100th of its own time, and no duration past the most steps.
func TestAutoStep(t *testing.T) {
	for _, tc := range []struct {
		blocks, transfers []float64
		max, want         float64
	}{
		{[]float64{20, 40, 23, 46}, nil, 1e5, 0.1},                  // 20/200
		{[]float64{20, 40, 23, 46}, []float64{0.16977}, 1e5, 0.001}, // 0.17/100
		{[]float64{20, 40, 23, 46}, []float64{0.16977}, 1e4, 0.005}, // 46 ms in at most 10⁴ steps
		{[]float64{3.4, 6.8}, nil, 1e5, 0.01},
		{[]float64{0, -1}, nil, 1e5, 1},
	} {
		got := AutoStep(tc.blocks, tc.transfers, tc.max)
		if got != tc.want {
			t.Errorf("AutoStep(%v, %v, %g) = %g, want %g", tc.blocks, tc.transfers, tc.max, got, tc.want)
			continue
		}
		if tc.max < 1e5 {
			continue // the most steps bind: the rounding is reported instead
		}
		for _, d := range append(append([]float64(nil), tc.blocks...), tc.transfers...) {
			if d > 0 && math.Abs(math.Max(1, math.Round(d/got))*got-d) > 0.005*d {
				t.Errorf("step %g: %g rounds by more than 0.5 %%", got, d)
			}
		}
	}
}
