package placement

import (
	"fmt"
	"testing"
)

// Tests that pin what the Tessel paper says about placements. Each cites
// where the claim comes from.

// Reference: §VI-A, "The recompute technique typically results in triple
// the amount of time for backward computation compared to forward
// computation": the default backward time is three forward times.
func TestPaperRecomputeTimes(t *testing.T) {
	for _, name := range BuiltinNames() {
		p, err := Builtin(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range p.Blocks {
			if len(b.Devices) != 1 {
				continue // shard and cross blocks, see TestPaperAllDeviceBlocks
			}
			want := DefaultForwardTime
			if b.Kind == Backward {
				want = 3 * DefaultForwardTime
			}
			if b.Time != want {
				t.Errorf("%s %s: time %d, want %d", name, b.ID, b.Time, want)
			}
		}
	}
}

// Reference: §VI-A "Operator placement" and Fig. 8(a,d,g): GPT (M-Shape) and
// mT5 (NN-Shape) spread the large embedding over all devices; Flava
// (K-Shape) places its independent branches on distinct devices and its
// cross encoder on all of them.
func TestPaperAllDeviceBlocks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		allDev int // blocks on all devices
	}{
		{"m-shape", 2},  // embedding forward and backward
		{"nn-shape", 4}, // the shared embedding, before encoder and decoder, both passes
		{"k-shape", 2},  // cross encoder forward and backward
		{"v-shape", 0},
		{"x-shape", 0},
	} {
		for _, d := range []int{2, 4, 8} {
			p, err := Builtin(tt.name, Options{Devices: d})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, b := range p.Blocks {
				if len(b.Devices) == d && d > 1 {
					n++
				}
			}
			if n != tt.allDev {
				t.Errorf("%s D=%d: %d blocks on all devices, want %d", tt.name, d, n, tt.allDev)
			}
		}
	}
	// K-Shape: no device runs stages of both branches.
	p, _ := Builtin("k-shape", Options{Devices: 8})
	preds := p.Preds()
	branch := make(map[int]int) // device → the branch root reaching it
	var root func(i int) int
	root = func(i int) int {
		if len(preds[i]) == 0 {
			return i
		}
		return root(preds[i][0])
	}
	for i, b := range p.Blocks {
		if b.Kind != Forward || len(b.Devices) != 1 {
			continue
		}
		r := root(i)
		if prev, ok := branch[b.Devices[0]]; ok && prev != r {
			t.Errorf("device %d runs both branches", b.Devices[0])
		}
		branch[b.Devices[0]] = r
	}
}

// Reference: §VI-C, Fig. 11: "all schedules can achieve a zero bubble rate
// when a sufficiently large number of micro-batches is used" (memory
// unconstrained), and §VI-B: "1F1B can achieve zero bubble rate under its
// V-Shape placement". That needs balanced device loads: the repetend
// bubble rate is at least (D·max_d load_d − Σ_d load_d) / (D·max_d load_d).
func TestPaperBalancedLoads(t *testing.T) {
	for _, name := range BuiltinNames() {
		for _, d := range []int{2, 4, 8} {
			for _, infer := range []bool{false, true} {
				p, err := Builtin(name, Options{Devices: d, Inference: infer})
				if err != nil {
					t.Fatal(err)
				}
				sum := 0
				for _, l := range p.Loads() {
					sum += l
				}
				if d*p.MaxLoad() != sum {
					t.Errorf("%s D=%d infer=%v: loads %v unbalanced", name, d, infer, p.Loads())
				}
			}
		}
	}
}

// Reference: Fig. 4(a): one micro-batch of the 1F1B (V-Shape) placement on
// 4 devices is a single chain forward down the devices and backward up.
func TestPaperVShapeFig4(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	order, ok := p.Topo()
	if !ok || len(p.Deps) != p.K()-1 {
		t.Fatalf("not a chain: %v", p.Deps)
	}
	want := []string{"f0", "f1", "f2", "f3", "b3", "b2", "b1", "b0"}
	for n, i := range order {
		if got := p.Blocks[i].ID; got != want[n] {
			t.Errorf("position %d: %s, want %s", n, got, want[n])
		}
		if dev := p.Blocks[i].Devices[0]; p.Blocks[i].ID[1:] != fmt.Sprint(dev) {
			t.Errorf("%s on device %d", p.Blocks[i].ID, dev)
		}
	}
}
