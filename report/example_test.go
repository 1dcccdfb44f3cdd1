package report_test

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// A search's summary, the figures tessel search --json prints, and
// whether the schedule is proven optimal, in words.
func ExampleSearchSummary() {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		panic(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 32, Memory: 6}, search.Options{})
	if err != nil {
		panic(err)
	}
	sum := report.SearchSummary(res, repetend.StrategyJoint)
	fmt.Printf("%s, %d devices, memory %d, %d micro-batches\n", sum.Placement, sum.Devices, sum.Memory, sum.MicroBatches)
	fmt.Printf("makespan %d (lower bound %d), bubble rate %.4f, peak memory %v, built by %s\n", sum.Makespan, sum.LowerBound.Makespan, sum.BubbleRate, sum.PeakMemory, sum.Source)
	fmt.Printf("repetend: N_R %d, period %d; valid %v\n", sum.NR, sum.Period, sum.Valid)
	fmt.Println("proven:", report.ProofStatus(res))
	// Output:
	// m-shape, 4 devices, memory 6, 32 micro-batches
	// makespan 204 (lower bound 204), bubble rate 0.0588, peak memory [5 4 2 1], built by modulo
	// repetend: N_R 6, period 6; valid true
	// proven: yes: the makespan meets the lower bound
}
