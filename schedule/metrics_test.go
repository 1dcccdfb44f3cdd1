package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// 1F1B on a v-shape of D devices, forward f and backward b, N
// micro-batches: makespan (N+D-1)(f+b), every device busy N(f+b), so the
// bubble rate is (D-1)/(N+D-1); device s holds at most min(D-s, N)
// activations.
func TestMeasureOneF1B(t *testing.T) {
	for _, tc := range []struct{ d, n, f, b int }{{4, 4, 1, 3}, {4, 8, 1, 3}, {2, 1, 1, 1}, {8, 16, 2, 3}, {3, 5, 1, 2}} {
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: tc.d, ForwardTime: tc.f, BackwardTime: tc.b})
		s := oneF1B(t, p, tc.n, 0)
		if err := Verify(s); err != nil {
			t.Fatal(err)
		}
		m := Measure(s)
		if want := (tc.n + tc.d - 1) * (tc.f + tc.b); m.Makespan != want || Makespan(s) != want {
			t.Errorf("%+v: makespan %d, want %d", tc, m.Makespan, want)
		}
		if want := float64(tc.d-1) / float64(tc.n+tc.d-1); math.Abs(m.BubbleRate-want) > 1e-12 {
			t.Errorf("%+v: bubble rate %v, want %v", tc, m.BubbleRate, want)
		}
		for d := range tc.d {
			if want := tc.n * (tc.f + tc.b); m.Loads[d] != want {
				t.Errorf("%+v: load of device %d = %d, want %d", tc, d, m.Loads[d], want)
			}
			if want := min(tc.d-d, tc.n); m.PeakMemory[d] != want {
				t.Errorf("%+v: peak memory of device %d = %d, want %d", tc, d, m.PeakMemory[d], want)
			}
		}
		if m.LowerBound != LowerBounds(p, tc.n, 0) {
			t.Errorf("%+v: Measure's bound %v, LowerBounds %v", tc, m.LowerBound, LowerBounds(p, tc.n, 0))
		}
	}
}

// A block on g devices is busy on each of them: m-shape's shard blocks
// count on all 4 devices.
func TestMeasureGroupLoads(t *testing.T) {
	p := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4})
	s := greedy(p, 3)
	m := Measure(s)
	busy := 0
	for d, l := range m.Loads {
		// fs and bs (time 1 each) plus f_d and b_d, per micro-batch.
		if want := 3 * (1 + 1 + 1 + 3); l != want {
			t.Errorf("load of device %d = %d, want %d", d, l, want)
		}
		busy += l
	}
	want := 1 - float64(busy)/float64(4*m.Makespan)
	if math.Abs(m.BubbleRate-want) > 1e-12 {
		t.Errorf("bubble rate %v, want %v", m.BubbleRate, want)
	}
}

func TestLowerBounds(t *testing.T) {
	tests := []struct {
		name   string
		opt    placement.Options
		n      int
		period int
		span   int
	}{
		// v-shape(4), f=1, b=3: load 4 everywhere, critical path 16. Device
		// 3 runs f3 (head 3) first at the earliest and b3 (tail 9) last at
		// the latest: 3 + 4N + 9, which 1F1B reaches ((N+3)·4).
		{"v-shape", placement.Options{}, 1, 4, 16},
		{"v-shape", placement.Options{}, 8, 4, 44},
		// No micro-batches, no makespan.
		{"v-shape", placement.Options{}, 0, 4, 0},
		// m-shape(4): load 6 per device (fs, f_d, b_d, bs); device 3:
		// min head 0 (fs), min tail 0 (bs) gives only 24. With fs and bs
		// (on all devices) cut out (barrierBound): device 3 runs f3
		// (head 3) and b3 (tail 9) 4 times each: 3 + 16 + 9 + 4·2 = 36,
		// the time-optimal makespan the public Python Tessel finds
		// (Lin et al. §III-B).
		{"m-shape", placement.Options{}, 4, 6, 36},
		// critical path 18 beats 1·6.
		{"m-shape", placement.Options{}, 1, 6, 18},
	}
	for _, tt := range tests {
		p := placementtest.Builtin(t, tt.name, tt.opt)
		if got := LowerBounds(p, tt.n, 0); got != (Bounds{tt.period, tt.span}) {
			t.Errorf("LowerBounds(%s, %d, 0) = %+v, want {%d %d}", tt.name, tt.n, got, tt.period, tt.span)
		}
	}
}

// The makespan bound is a lower bound: no valid schedule beats it. Random
// list schedules of every shape, with the bound's head/tail term
// exercised by shapes whose devices start late or end early.
func TestLowerBoundsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		name := placement.BuiltinNames()[trial%len(placement.BuiltinNames())]
		p := placementtest.Builtin(t, name, placement.Options{Devices: 2 + 2*rng.IntN(3), ForwardTime: 1 + rng.IntN(2), BackwardTime: 1 + rng.IntN(4)})
		n := 1 + rng.IntN(6)
		s := randomValid(rng, p, n, rng.IntN(2))
		if rng.IntN(2) == 0 {
			s = greedy(p, n)
		}
		if err := Verify(s); err != nil {
			t.Fatal(err)
		}
		if lb := LowerBounds(p, n, 0); Makespan(s) < lb.Makespan {
			t.Fatalf("%s D=%d N=%d: makespan %d below the lower bound %d", name, p.Devices, n, Makespan(s), lb.Makespan)
		}
	}
}

func TestRepetendBubbleRate(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{}) // Σ load = 16
	for _, tc := range []struct {
		period int
		want   float64
	}{{4, 0}, {5, 0.2}, {8, 0.5}, {0, 0}} {
		if got := RepetendBubbleRate(p, tc.period); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("RepetendBubbleRate(P=%d) = %v, want %v", tc.period, got, tc.want)
		}
	}
}

func TestMeasureEmpty(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	m := Measure(&Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}})
	if m.Makespan != 0 || m.BubbleRate != 0 || !slices.Equal(m.PeakMemory, []int{0, 0}) {
		t.Errorf("Measure of no instances = %+v", m)
	}
	if got := Measure(nil); got.Makespan != 0 || got.PeakMemory != nil {
		t.Errorf("Measure(nil) = %+v", got)
	}
}

// layerChain is stages × layers: every layer's forward (time 1, memory
// +1) down the devices, then every backward (time 2, memory −1) back.
func layerChain(stages, layers int) *placement.Placement {
	p := &placement.Placement{Name: "chain", Devices: stages}
	var chain []int
	for s := range stages {
		for l := range layers {
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("f%d.%d", s, l), Kind: placement.Forward, Devices: []int{s}, Time: 1, Memory: 1})
			chain = append(chain, len(p.Blocks)-1)
		}
	}
	for s := stages - 1; s >= 0; s-- {
		for l := layers - 1; l >= 0; l-- {
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("b%d.%d", s, l), Kind: placement.Backward, Devices: []int{s}, Time: 2, Memory: -1})
			chain = append(chain, len(p.Blocks)-1)
		}
	}
	for k := 1; k < len(chain); k++ {
		p.Deps = append(p.Deps, placement.Dep{From: chain[k-1], To: chain[k]})
	}
	return p
}

// The memory bound, worked by hand for 64 stages × 8 layers, memory 16,
// 8 micro-batches: device 0 holds 8 activations from the start of f0.7
// to the start of b0.7, at least ℓ = 1 + 504 + 1008 = 1513 apart, so two
// micro-batches at a time: 7 (head of f0.7) + ⌈8·1513/2⌉ + 2 (b0.7) +
// 14 (its tail) = 6075, far above the load and path bounds (1704).
func TestLowerBoundsMemory(t *testing.T) {
	p := layerChain(64, 8)
	if got := LowerBounds(p, 8, 0).Makespan; got != 1704 {
		t.Errorf("without a budget: %d, want 1704", got)
	}
	if got := LowerBounds(p, 8, 16).Makespan; got != 6075 {
		t.Errorf("memory 16: %d, want 6075", got)
	}
	// A budget that holds every micro-batch adds nothing.
	if got := LowerBounds(p, 8, 64).Makespan; got != 1704 {
		t.Errorf("memory 64: %d, want 1704", got)
	}
	// LowerBoundsBy names the argument that gives each.
	for _, c := range []struct {
		memory int
		want   MakespanBound
	}{{0, BoundDeviceLoad}, {16, BoundMemory}, {64, BoundDeviceLoad}} {
		if _, by := LowerBoundsBy(p, 8, c.memory); by != c.want {
			t.Errorf("memory %d: bound by %v, want %v", c.memory, by, c.want)
		}
	}
}

// The bound with the blocks on all devices cut out is named as such: on
// nn-shape, 6 micro-batches, memory 6, it gives 60 (the proven optimum)
// where the critical path and the devices' loads give less.
func TestLowerBoundsByBarriers(t *testing.T) {
	p := placementtest.Builtin(t, "nn-shape", placement.Options{Devices: 4})
	b, by := LowerBoundsBy(p, 6, 6)
	if b.Makespan != 60 || by != BoundBarriers {
		t.Errorf("nn-shape, 6 micro-batches, memory 6: bound %d by %v, want 60 by %v", b.Makespan, by, BoundBarriers)
	}
}
