package partition

import (
	"context"
	"fmt"
	"testing"
)

// Reference: Tarnawski et al., "Efficient Algorithms for Device Placement
// of DNN Graph Operators", Table 1, column "DP (contiguous)": time per
// sample (max load) of the best contiguous split, 6 accelerators (3 for
// BERT-3), 16 GB each, 1 CPU, and the "Ideals" column (the number of
// ideals of the forward part after the preprocessing of its appendix B).
// Every graph of the table that ships with the repository.
func TestPaperTable1DP(t *testing.T) {
	cases := []struct {
		file   string
		tps    string
		ideals int
	}{
		{"layer/bert24_inference.json", "17.79", 30},
		{"layer/bert24_training.json", "41.75", 30},
		{"layer/resnet50_inference.json", "33.77", 242},
		{"layer/resnet50_training.json", "78.63", 242},
		{"operator/bert_l-3_inference.json", "27.92", 1428},
		{"operator/bert_l-3_training.json", "65.30", 2774},
		{"operator/resnet50_inference.json", "124.35", 241},
		{"operator/resnet50_training.json", "255.19", 258},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			g := loadPaper(t, c.file)
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

// BERT-24's layer graph has zero-time nodes beside the layers: the two
// inputs and the attention mask (ids 1, 2 and 4, sources), 3 (their
// embedding's join) and two sinks. Each source or sink with one neighbour
// could be in an ideal or not: 39 ideals. The published DP merges such a
// node into its neighbour (mergeIdle), which leaves the chain of
// embedding, 24 layers and head that Table 1 counts: 30 ideals (Tarnawski
// et al., Table 1, "Ideals"). Without the merge, the DP's answer is the
// same.
func TestBERT24Ideals(t *testing.T) {
	for _, f := range []string{"layer/bert24_inference.json", "layer/bert24_training.json"} {
		g := loadPaper(t, f)
		r, err := Contiguous(context.Background(), g, DPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Ideals != 30 {
			t.Errorf("%s: %d ideals, want 30", f, r.Ideals)
		}
		u, err := contract(g)
		if err != nil {
			t.Fatal(err)
		}
		lat, err := u.ideals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// 8 subsets of the sources {1, 2, 4}; {1,2,3} with or without 4;
		// the chain 5..28; 29; 30; the subsets of the sinks {31, 32}.
		if want := 8 + 2 + 24 + 1 + 1 + 3; len(lat.sets) != want {
			t.Errorf("%s: %d ideals before the merge, want %d", f, len(lat.sets), want)
		}
		if want, _ := naiveDP(t, g, false); fmt.Sprintf("%.9f", want) != fmt.Sprintf("%.9f", r.Split.MaxLoad) {
			t.Errorf("%s: %.9f with the merge, %.9f without", f, r.Split.MaxLoad, want)
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
		g := loadPaper(t, c.file)
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
