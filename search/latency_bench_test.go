package search

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// Benchmarks of the search under a latency budget (the Tessel paper's
// §VI-D setting): go test ./search -run '^$' -bench Latency.

func benchLatency(b *testing.B, p *placement.Placement, n, budget int) {
	b.Helper()
	for b.Loop() {
		res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Latency: budget}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Makespan()), "makespan")
	}
}

// m-shape inference, 8 micro-batches, a budget that binds (6, critical
// path 5): the time-optimal search under the budget proves 25.
func BenchmarkLatencySearchMShape(b *testing.B) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		b.Fatal(err)
	}
	benchLatency(b, p, 8, 6)
}

// m-shape inference, 32 micro-batches (too many instances for the
// time-optimal search of all of them): constructions, the repetend under
// the budget and its phases.
func BenchmarkLatencySearchMShape32(b *testing.B) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		b.Fatal(err)
	}
	benchLatency(b, p, 32, 7)
}

// The Flava-like placement, 64 micro-batches, budget 200 (docs/inference.md).
func BenchmarkLatencySearchFlava64(b *testing.B) {
	p, err := placement.Load(filepath.Join("..", "testdata", "placements", "flava-infer.json"))
	if err != nil {
		b.Fatal(err)
	}
	benchLatency(b, p, 64, 200)
}
