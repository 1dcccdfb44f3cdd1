package compare

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/verify"
)

// flavaNs are the N of docs/inference.md's Fig. 15 table.
var flavaNs = []int{1, 2, 4, 8, 16, 32, 64}

// TestFlavaFig15 pins the shape of the Tessel paper's Fig. 15 (Lin et
// al., §VI-D: Flava inference on 4 devices under a latency budget) on the
// Flava-like placement: at a budget tensor parallelism meets, Tessel's
// throughput is at least tensor parallelism's and the 1F1B chain's at
// every N of the table, and every Tessel schedule meets the budget.
func TestFlavaFig15(t *testing.T) {
	p, err := placement.Load(filepath.Join("..", "testdata", "placements", "flava-infer.json"))
	if err != nil {
		t.Fatal(err)
	}
	const budget = 200
	res, err := LatencySweep(context.Background(), p, LatencyOptions{MicroBatches: flavaNs, Budgets: []int{budget}, Inference: inference.Options{Efficiency: 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]map[int]LatencyPoint{}
	for _, pt := range res.Points {
		if by[pt.Method] == nil {
			by[pt.Method] = map[int]LatencyPoint{}
		}
		by[pt.Method][pt.MicroBatches] = pt
		if err := verify.Schedule(pt.Schedule); err != nil {
			t.Errorf("%s, N %d: %v", pt.Method, pt.MicroBatches, err)
		}
	}
	for _, n := range flavaNs {
		ts, tp, pipe := by["Tessel"][n], by["TP"][n], by["1F1B (chain)"][n]
		if tp.MaxLatency > budget {
			t.Fatalf("N %d: TP's latency %d is over the budget %d: the test wants a budget TP meets", n, tp.MaxLatency, budget)
		}
		if ts.MaxLatency > budget {
			t.Errorf("N %d: Tessel's latency %d over the budget", n, ts.MaxLatency)
		}
		if ts.Throughput < tp.Throughput || ts.Throughput < pipe.Throughput {
			t.Errorf("N %d: Tessel's throughput %g below TP's %g or 1F1B's %g", n, ts.Throughput, tp.Throughput, pipe.Throughput)
		}
	}
}
