package inference

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

func flava(t testing.TB) *placement.Placement {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "placements", "flava-infer.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := placement.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBaselinesFlava pins the baselines of the Flava-like placement (the
// Tessel paper's Fig. 15 setting: two encoders on two devices each, the
// fusion encoder on all four) at efficiency 0.8: tensor parallelism runs
// text 60·(2/4)/0.8 = 37.5 → 38, image 50, fusion 60, so 148 a request;
// the 1F1B chain runs text 60·2·0.8 = 96, image 128, fusion
// 60·4·0.64 = 153.6 → 154 on three devices: latency 378 alone, period
// 154.
func TestBaselinesFlava(t *testing.T) {
	p := flava(t)
	opt := Options{Efficiency: 0.8}
	for _, tc := range []struct {
		method            string
		n                 int
		makespan, latency int
	}{
		{"tp", 1, 148, 148},
		{"tp", 4, 4 * 148, 148},
		{"1f1b", 1, 378, 378},
		{"1f1b", 4, 378 + 3*154, 552}, // requests queue before the slowest stage
		{"gpipe", 1, 140, 140},
	} {
		m, _ := Lookup(tc.method)
		s, err := m.Build(p, tc.n, opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		if ms, lat := schedule.Makespan(s), schedule.MeasureLatency(s).Max; ms != tc.makespan || lat != tc.latency {
			t.Errorf("%s, N %d: makespan %d latency %d, want %d and %d", tc.method, tc.n, ms, lat, tc.makespan, tc.latency)
		}
	}
}

func TestBaselinesIdeal(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	// Ideal tensor parallelism of four stages of time 1 on 4 devices: 1 each.
	q := TPPlacement(p, Options{})
	for _, b := range q.Blocks {
		if b.Time != 1 || len(b.Devices) != 4 {
			t.Errorf("%s: time %d on %v", b.ID, b.Time, b.Devices)
		}
	}
	// The chain of a chain is itself.
	c := ChainPlacement(p, Options{})
	for i, b := range c.Blocks {
		if b.Devices[0] != i {
			t.Errorf("%s on device %d", b.ID, b.Devices[0])
		}
	}
	if _, err := TensorParallel(p, 2, Options{Efficiency: 1.5}); err == nil {
		t.Errorf("efficiency 1.5 accepted")
	}
	train, _ := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if _, err := OneFOneB(train, 2, Options{}); err == nil {
		t.Errorf("a training placement accepted")
	}
}

func TestSplitChain(t *testing.T) {
	for _, tc := range []struct {
		times []int
		d     int
		want  []int
	}{
		{[]int{1, 1, 1, 1}, 4, []int{0, 1, 2, 3}},
		{[]int{1, 1, 1, 1}, 2, []int{0, 0, 1, 1}},
		{[]int{5, 1, 1, 1}, 2, []int{0, 1, 1, 1}},
		{[]int{96, 128, 154}, 4, []int{0, 1, 2}},
	} {
		got := splitChain(tc.times, tc.d)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%v in %d: %v, want %v", tc.times, tc.d, got, tc.want)
				break
			}
		}
	}
}
