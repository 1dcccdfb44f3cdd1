package runtimegen_test

import (
	"fmt"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/spec"
)

// A verified schedule turned into one program per device, the
// non-blocking programs checked and simulated on the placement's times:
// they end at the schedule's makespan, and cannot deadlock.
func ExampleGenerate() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		panic(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 2))
	if err != nil {
		panic(err)
	}
	progs, err := runtimegen.Generate(s, runtimegen.NonBlocking)
	if err != nil {
		panic(err)
	}
	if err := runtimegen.Check(progs); err != nil {
		panic(err)
	}
	fmt.Print(progs[1].Text())
	res, err := runtimegen.SimulateWith(progs, runtimegen.SimOptions{Placement: p})
	if err != nil {
		panic(err)
	}
	fmt.Printf("makespan %d, %d transfers, idle %v\n", res.Makespan, res.Transfers, res.Idle)
	// Output:
	// # v-shape device 1 of 2, nonblocking, 2 micro-batches
	// recv f0->f1@0 from 0 #0
	// recv f0->f1@1 from 0 #1
	// wait f0->f1@0 from 0 #0
	// compute f1@0
	// compute b1@0
	// send b1->b0@0 to 0 #2
	// wait f0->f1@1 from 0 #1
	// compute f1@1
	// compute b1@1
	// send b1->b0@1 to 0 #3
	// wait b1->b0@0 to 0 #2
	// wait b1->b0@1 to 0 #3
	// makespan 12, 4 transfers, idle [4 4]
}
