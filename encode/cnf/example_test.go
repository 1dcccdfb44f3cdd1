package cnf_test

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/encode/cnf"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// The least makespan of three micro-batches on the split V of two
// devices, one activation of memory each, moves of one step: the formula
// at 13 has a model, a verified schedule; at 12 it has none, so 13 is
// the optimum. For a large formula, WriteDIMACS it for a SAT solver and
// read its answer back with ReadAnswer.
func ExampleEncode() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2, SplitBackward: true})
	if err != nil {
		panic(err)
	}
	sp := spec.Spec{Placement: p.WithOffload(1), MicroBatches: 3, Memory: 1, Allowed: spec.Decisions{Offload: true}}
	for _, T := range []int{13, 12} {
		f, err := cnf.Encode(context.Background(), sp, T)
		if err != nil {
			panic(err)
		}
		a, err := f.Solve(context.Background(), nil, z3.SolverOptions{})
		if err != nil {
			panic(err)
		}
		if a.Status != cnf.Satisfiable {
			fmt.Printf("ends by %d: %s\n", T, a.Status)
			continue
		}
		s, err := f.Schedule(a) // verified
		if err != nil {
			panic(err)
		}
		fmt.Printf("ends by %d: %s, makespan %d\n", T, a.Status, schedule.Makespan(s))
	}
	// Output:
	// ends by 13: satisfiable, makespan 13
	// ends by 12: unsatisfiable
}
