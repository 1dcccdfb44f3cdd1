package plan_test

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/report"
)

// tessel plan as a library call: a layer profile cut into 4 stages, the
// split's placement searched for 16 micro-batches under a budget of 6
// per device, and the report in the model's time.
func ExampleRun() {
	g, err := partition.Load("../testdata/models/gpt-like.json")
	if err != nil {
		panic(err)
	}
	g.Accelerators = 4
	pr, err := partition.Run(context.Background(), g, partition.Options{})
	if err != nil {
		panic(err)
	}
	res, err := plan.Run(context.Background(), pr, plan.Options{MicroBatches: 16, Budget: 6})
	if err != nil {
		panic(err)
	}
	r := report.NewPlan(res)
	fmt.Printf("time per sample %.2f (even split %.2f)\n", r.TimePerSample, r.EvenPerSample)
	fmt.Printf("16 micro-batches: makespan %d steps = %.2f in model time, verified %v\n", r.Schedule.Makespan, r.MakespanTime, r.Schedule.Valid)
	// Output:
	// time per sample 12.00 (even split 16.20)
	// 16 micro-batches: makespan 447 steps = 223.50 in model time, verified true
}
