package partition_test

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// From a model to a schedule: a layer profile cut into the stages of
// least time per sample on 4 devices, the split turned into a placement
// that times every block within half a percent, and its schedule
// searched on the placement's coarse copy, timed again at the
// placement's own steps and verified (what tessel plan does).
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
	res, err := exact.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 16}, search.Options{})
	if err != nil {
		panic(err)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		panic(err)
	}
	u := p.Units
	fmt.Printf("placement %s: %d blocks on %d devices, a step %g, the search's step %g\n", p.Name, len(p.Blocks), p.Devices, u.Step, rep.Converted.SearchUnit)
	m := schedule.Measure(res.Schedule)
	fmt.Printf("16 micro-batches: makespan %s (lower bound %s)\n", u.Duration(float64(m.Makespan)), u.Duration(float64(rules.LowerBounds(res.Schedule.Spec).Makespan)))
	// Output:
	// max load 12.00 per sample over 4 stages
	// placement gpt-like: 8 blocks on 4 devices, a step 0.01, the search's step 0.5
	// 16 micro-batches: makespan 223.2 (lower bound 223.2)
}
