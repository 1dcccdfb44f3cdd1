package inference_test

import (
	"fmt"

	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// The inference baselines of a forward-only placement, each with the
// latency of its requests and its throughput: tensor parallelism runs one
// request at a time on every device, the 1F1B chain pipelines them.
func ExampleBaselines() {
	p, err := placement.Load("../testdata/placements/flava-infer.json")
	if err != nil {
		panic(err)
	}
	for _, b := range inference.Baselines() {
		s, err := b.Build(p, 8, inference.Options{Efficiency: 0.8})
		if err != nil {
			fmt.Printf("%-12s %v\n", b.Title, err)
			continue
		}
		if err := verify.Schedule(s); err != nil {
			panic(err)
		}
		l := schedule.MeasureLatency(s)
		fmt.Printf("%-12s makespan %4d, latency max %3d, throughput %.4f\n", b.Title, schedule.Makespan(s), l.Max, l.Throughput)
	}
	// Output:
	// TP           makespan 1184, latency max 148, throughput 0.0068
	// 1F1B (chain) makespan 1456, latency max 784, throughput 0.0055
	// GPipe        makespan 1120, latency max 700, throughput 0.0071
}
