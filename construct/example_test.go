package construct_test

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// The solver-free constructions on GPT's M-shape under a budget of 6 per
// device, best first: the modulo schedule meets the makespan's lower
// bound, so the portfolio stops there.
func ExamplePortfolio() {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		panic(err)
	}
	entries, err := construct.Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: 32, Memory: 6})
	if err != nil {
		panic(err)
	}
	for _, e := range entries[:min(3, len(entries))] {
		if err := verify.Schedule(e.Schedule); err != nil {
			panic(err)
		}
		fmt.Printf("%-28s makespan %d, repeats a period: %v\n", e.Name, e.Makespan, e.Periodic != nil)
	}
	b := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 32, Memory: 6})
	fmt.Println("lower bound", b.Makespan)
	// Output:
	// modulo                       makespan 204, repeats a period: true
	// lower bound 204
}
