package search_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
	"github.com/tessel-pp/tessel/verify"
)

// A built-in placement, searched, verified and exported as PyTorch's
// pipelining CSV: the main path of the library.
func ExampleRun() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		panic(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 4}, search.Options{})
	if err != nil {
		panic(err)
	}
	s := res.Schedule
	if err := verify.Schedule(s); err != nil { // never trust the solver
		panic(err)
	}
	fmt.Printf("makespan %d (lower bound %d), built by %s\n", res.Makespan(), res.Bounds.Makespan, res.Source)
	if r := res.Repetend; r != nil {
		fmt.Printf("repetend: N_R %d, period %d\n", r.NR, r.Period)
	}
	tab, err := torchcsv.Export(s)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(tab.Marshal())
	// Output:
	// makespan 44 (lower bound 44), built by modulo
	// repetend: N_R 4, period 4
	// 0F0,0F1,0F2,0F3,0B0,0F4,0B1,0F5,0B2,0F6,0B3,0F7,0B4,0B5,0B6,0B7
	// 1F0,1F1,1F2,1B0,1F3,1B1,1F4,1B2,1F5,1B3,1F6,1B4,1F7,1B5,1B6,1B7
	// 2F0,2F1,2B0,2F2,2B1,2F3,2B2,2F4,2B3,2F5,2B4,2F6,2B5,2F7,2B6,2B7
	// 3F0,3B0,3F1,3B1,3F2,3B2,3F3,3B3,3F4,3B4,3F5,3B5,3F6,3B6,3F7,3B7
}

// The time-optimal schedule of a few micro-batches (the Tessel paper's
// TO baseline), started from the constructions and verified.
func ExampleOptimal() {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		panic(err)
	}
	res, err := search.Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 2, Memory: 6}, search.OptimalOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("makespan %d, proven %v\n", res.Solution.Makespan, res.Solution.Proven)
	// Output: makespan 24, proven true
}
