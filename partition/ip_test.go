package partition

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
)

// Reference: Tarnawski et al., "Efficient Algorithms for Device Placement
// of DNN Graph Operators", Table 1, column "IP (non-contiguous)": BERT-3
// operator inference 21.91 against the DP's 27.92 (27% gain), the IP
// proven optimal. Ours proves it in seconds.
func TestPaperIPBERT3(t *testing.T) {
	testskip.Short(t, "a few seconds of Z3")
	g := loadPaper(t, "operator/bert_l-3_inference.json")
	dp, err := Contiguous(context.Background(), g, DPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := NonContiguous(ctx, g, IPOptions{Start: dp.Split})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%.2f", r.Split.MaxLoad); got != "21.91" {
		t.Errorf("non-contiguous time per sample %s, paper 21.91", got)
	}
	if !r.Proven || r.Gap > 1e-4 {
		t.Errorf("proven %v, gap %.5f, want proven within 60 s", r.Proven, r.Gap)
	}
	if !r.Split.Fits() || !r.Split.Colocated {
		t.Errorf("fits %v, colocated %v", r.Split.Fits(), r.Split.Colocated)
	}
	t.Logf("%.4f in %v, %d checks", r.Split.MaxLoad, r.Elapsed, r.Checks)
}

// Not a check of the paper's figure (our solver's own behaviour within a
// time limit). Reference: Tarnawski et al., Table 1: BERT-24 layer inference, IP
// (non-contiguous) 17.71 against the DP's 17.79; the paper's solver found
// it in 1 s and could not prove it in 20 minutes. Within a short limit
// ours improves on the DP, keeps the best split and reports a gap.
func TestIPBERT24Anytime(t *testing.T) {
	testskip.Short(t, "seconds of Z3")
	g := loadPaper(t, "layer/bert24_inference.json")
	dp, err := Contiguous(context.Background(), g, DPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	r, err := NonContiguous(ctx, g, IPOptions{Start: dp.Split})
	if err != nil {
		t.Fatal(err)
	}
	if r.Split.MaxLoad > dp.Split.MaxLoad {
		t.Errorf("best %.4f worse than the start %.4f", r.Split.MaxLoad, dp.Split.MaxLoad)
	}
	if r.LowerBound > r.Split.MaxLoad || r.Gap < 0 || r.Gap >= 1 {
		t.Errorf("bound %.4f, best %.4f, gap %.4f", r.LowerBound, r.Split.MaxLoad, r.Gap)
	}
	if r.Proven {
		t.Logf("proven (the paper's solver could not in 20 minutes)")
	}
	t.Logf("best %.4f (paper 17.71), bound %.4f, gap %.1f%%, %d checks", r.Split.MaxLoad, r.LowerBound, 100*r.Gap, r.Checks)
}

func TestFractionalBound(t *testing.T) {
	for _, c := range []struct {
		acc, cpu []float64
		noAcc    []bool
		k, l     int
		want     float64
	}{
		// All on one accelerator: the total.
		{[]float64{4, 4}, []float64{40, 40}, []bool{false, false}, 1, 0, 8},
		// A CPU ten times slower takes a tenth-ish: T = 8 − T/10.
		{[]float64{4, 4}, []float64{40, 40}, []bool{false, false}, 1, 1, 80.0 / 11},
		// Two accelerators: the larger group bounds it.
		{[]float64{5, 1}, []float64{50, 10}, []bool{false, false}, 2, 0, 5},
		// A group no accelerator runs stays on the CPU.
		{[]float64{1, 0}, []float64{10, 7}, []bool{false, true}, 1, 1, 7},
	} {
		got := fractionalBound(c.acc, c.cpu, c.noAcc, c.k, c.l)
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("fractionalBound(%v, %v, %v, %d, %d) = %v, want %v", c.acc, c.cpu, c.noAcc, c.k, c.l, got, c.want)
		}
	}
}
