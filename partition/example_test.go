package partition_test

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// From a model to a schedule: a layer profile cut into the stages of
// least time per sample on 4 devices, the split turned into a placement,
// and its schedule searched and verified (what tessel plan does).
func ExampleRun() {
	g, err := partition.Load("../testdata/models/gpt-like.json")
	if err != nil {
		panic(err)
	}
	g.Accelerators = 4
	rep, err := partition.Run(context.Background(), g, partition.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("max load %.2f per sample over %d stages\n", rep.MaxLoad, len(rep.Stages))
	p := rep.Converted.Placement
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 16}, search.Options{})
	if err != nil {
		panic(err)
	}
	if err := schedule.Verify(res.Schedule); err != nil {
		panic(err)
	}
	fmt.Printf("placement %s: %d blocks on %d devices, time unit %.4g\n", p.Name, len(p.Blocks), p.Devices, rep.Converted.TimeUnit)
	fmt.Printf("16 micro-batches: makespan %d steps (lower bound %d)\n", res.Makespan(), res.Bounds.Makespan)
	// Output:
	// max load 12.00 per sample over 4 stages
	// placement gpt-like: 8 blocks on 4 devices, time unit 0.5
	// 16 micro-batches: makespan 447 steps (lower bound 447)
}
