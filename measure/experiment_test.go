package measure

import (
	"context"
	"flag"
	"fmt"
	"math"
	"testing"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/profile"
)

var measured = flag.Bool("measured", false, "run BenchmarkExperiment, the end-to-end experiment at a reduced size (minutes)")

// BenchmarkExperiment runs the end-to-end experiment of docs/measured.md
// at a reduced size (a 2-layer decoder, N = 4 and 8, 2 iterations after 1
// warm-up) and reports, per schedule and N, the measured and the
// calibrated predicted time per iteration, and the largest calibrated
// error. It runs for minutes, so only with -measured (make bench runs
// every benchmark: without the flag this one returns at once). The page's
// full experiment: scripts/docs/measured-experiment.sh.
//
//	go test ./measure -run '^$' -bench Experiment -benchtime 1x -measured
func BenchmarkExperiment(b *testing.B) {
	if !*measured {
		b.Log("the end-to-end experiment runs with -measured")
		return
	}
	if _, err := profile.FindPython(""); err != nil {
		testskip.Skip(b, "the experiment needs PyTorch: "+err.Error())
	}
	cfg := ExperimentConfig()
	cfg.Layers = 2
	for range b.N {
		res, err := Experiment(context.Background(), ExperimentOptions{Config: cfg, Devices: 2, N: []int{4, 8}, Warmup: 1, Iterations: 2,
			ProfileWarmup: 1, ProfileRepeats: 3, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		worst, worstLeast := 0.0, 0.0
		for _, r := range res.Rows {
			if r.Replanned {
				continue
			}
			b.ReportMetric(r.Measured, fmt.Sprintf("ms-measured-%s-N%d", r.Method, r.N))
			b.ReportMetric(r.Spread[0], fmt.Sprintf("ms-least-%s-N%d", r.Method, r.N))
			b.ReportMetric(r.Calibrated, fmt.Sprintf("ms-predicted-%s-N%d", r.Method, r.N))
			worst = math.Max(worst, math.Abs(ErrorPct(r.Calibrated, r.Measured)))
			worstLeast = math.Max(worstLeast, math.Abs(ErrorPct(r.Calibrated, r.Spread[0])))
		}
		b.ReportMetric(worst, "%-worst-calibrated-error")
		b.ReportMetric(worstLeast, "%-worst-calibrated-error-of-least")
	}
}
