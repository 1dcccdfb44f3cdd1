package rules_test

import (
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
)

// The lower bounds of one placement as its rules switch on: without a
// budget, a device's load bounds 8 micro-batches of the V-shape; a memory
// budget of 2 activations per device holds them back (the memory rule's
// argument), and the period with it.
func ExampleLowerBounds() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		panic(err)
	}
	for _, memory := range []int{0, 2} {
		b := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 8, Memory: memory})
		fmt.Printf("memory %d: period ≥ %d, makespan ≥ %d, by %s\n", memory, b.Period, b.Makespan, b.By)
	}
	// Output:
	// memory 0: period ≥ 4, makespan ≥ 44, by a device's load
	// memory 2: period ≥ 7, makespan ≥ 55, by the memory budget
}

// A step that handles the memory budget and nothing more asks, for each
// spec, the first rule the spec switches on that it does not handle: it
// applies where there is none, and where there is one it says why it is
// skipped, in the rule's own words.
func ExampleUnhandled() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		panic(err)
	}
	c, err := cluster.Simple(4, "", 1, true)
	if err != nil {
		panic(err)
	}
	queued, err := spec.OnCluster(c, p, 8)
	if err != nil {
		panic(err)
	}
	for _, sp := range []spec.Spec{
		{Placement: p, MicroBatches: 8, Memory: 2},
		{Placement: p, MicroBatches: 8, Memory: 2, Allowed: spec.Decisions{Offload: true}},
		queued,
	} {
		if r := rules.Unhandled(sp, memory.Rule{}); r != nil {
			fmt.Println("skipped:", rule.Title(r))
			continue
		}
		fmt.Println("applies")
	}
	// Output:
	// applies
	// skipped: offload and recompute decisions
	// skipped: links that carry one transfer at a time
}
