package partition

import (
	"context"
	"fmt"
	"testing"
)

// Reference: Tarnawski et al., Efficient Algorithms for Device Placement
// of DNN Graph Operators (NeurIPS 2020), Table 1, column
// "DP (contiguous)": time per sample (max load) of the best contiguous
// split, 6 accelerators (3 for BERT-3), 16 GB each, 1 CPU, and the
// "Ideals" column (the number of ideals of the contracted forward part).
func TestPaperTable1DP(t *testing.T) {
	cases := []struct {
		file   string
		tps    string
		ideals int // 0: not compared (see below)
	}{
		{"layer/bert24_inference.json", "17.79", 0},
		{"layer/bert24_training.json", "41.75", 0},
		{"layer/resnet50_inference.json", "33.77", 242},
		{"layer/resnet50_training.json", "78.63", 242},
		{"operator/bert_l-3_inference.json", "27.92", 1428},
		{"operator/bert_l-3_training.json", "65.30", 2774},
		{"operator/resnet50_inference.json", "124.35", 241},
		{"operator/resnet50_training.json", "255.19", 258},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			g := loadSeed(t, c.file)
			r, err := Contiguous(context.Background(), g, DPOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%.2f", r.Split.MaxLoad); got != c.tps {
				t.Errorf("time per sample %s, paper %s", got, c.tps)
			}
			if c.ideals > 0 && r.Ideals != c.ideals {
				t.Errorf("%d ideals, paper %d", r.Ideals, c.ideals)
			}
			if !r.Split.Contiguous || !r.Split.Fits() || !r.Split.Colocated {
				t.Errorf("split: contiguous %v, fits %v, colocated %v", r.Split.Contiguous, r.Split.Fits(), r.Split.Colocated)
			}
			if n := len(r.Split.Stages); n > g.Accelerators+g.CPUs {
				t.Errorf("%d stages on %d devices", n, g.Accelerators+g.CPUs)
			}
		})
	}
}

// BERT-24's layer graph has three zero-time source nodes (ids 1, 2 and 4,
// the inputs and the attention mask) that any ideal may or may not hold,
// and two sinks: 39 ideals, where the paper prints 30; its preprocessing of
// such nodes is not described. The value of the split is the paper's.
func TestBERT24Ideals(t *testing.T) {
	for _, f := range []string{"layer/bert24_inference.json", "layer/bert24_training.json"} {
		r, err := Contiguous(context.Background(), loadSeed(t, f), DPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// 8 subsets of the sources {1, 2, 4}; {1,2,3} with or without 4;
		// the chain 5..28; 29; 30; the subsets of the sinks {31, 32}.
		if want := 8 + 2 + 24 + 1 + 1 + 3; r.Ideals != want {
			t.Errorf("%s: %d ideals, want %d", f, r.Ideals, want)
		}
	}
}

// Reference: Tarnawski et al., Table 2, column "Single acc.": the whole model on
// one accelerator, for scale (BERT-24 layer inference 92.41 = 17.79/0.19;
// BERT-3 operator inference 49.35 = 27.92/0.57).
func TestPaperSingleAccelerator(t *testing.T) {
	for _, c := range []struct{ file, tps string }{
		{"layer/bert24_inference.json", "92.41"},
		{"operator/bert_l-3_inference.json", "49.35"},
	} {
		g := loadSeed(t, c.file)
		g.Accelerators, g.CPUs = 1, 0
		r, err := Contiguous(context.Background(), g, DPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%.2f", r.Split.MaxLoad); got != c.tps {
			t.Errorf("%s: single accelerator %s, paper %s", c.file, got, c.tps)
		}
		if got := fmt.Sprintf("%.2f", SingleDevice(g)); got != c.tps {
			t.Errorf("%s: SingleDevice %s, paper %s", c.file, got, c.tps)
		}
	}
}
