package study_test

import (
	"context"
	"os"

	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/study"
)

// tessel compare as a library call: Tessel beside the baselines on
// k-shape, as CSV, the search times masked so that the output is the same
// on every run.
func ExampleCompare() {
	err := study.Compare(context.Background(), study.CompareOptions{
		Placement:    spec.Source{Name: "k-shape", Devices: 4, ForwardTime: 1, BackwardTime: 3},
		MicroBatches: 8, Memory: 6, Optimal: true, OptimalN: 2, Format: "csv", MaskTimes: true,
	}, os.Stdout)
	if err != nil {
		panic(err)
	}
	// Output:
	// method,placement,micro_batches,status,repetend_bubble_rate,makespan,bubble_rate,peak_memory,budget_respected,seconds,proven,note
	// GPipe,k-shape,8,ok,0.000000,68,0.058824,16 16 16 16,false,,,steady period 8; does not adapt to the budget
	// 1F1B,k-shape,8,not applicable,,,,,,,,no straightforward adaptation to k-shape
	// 1F1B interleaved,k-shape,8,not applicable,,,,,,,,no straightforward adaptation to k-shape
	// Chimera-direct,k-shape,8,not applicable,,,,,,,,no straightforward adaptation to k-shape
	// 1F1B+,k-shape,8,not applicable,,,,,,,,no straightforward adaptation to k-shape
	// Tessel,k-shape,8,ok,0.000000,68,0.058824,3 2 3 2,true,<time>,true,"N_R 3, period 8; schedule from modulo"
	// time-optimal,k-shape,2,ok,,20,0.200000,4 4 4 4,true,<time>,true,only N = 2
}
