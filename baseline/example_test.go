package baseline_test

import (
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// A baseline by name, on the placement it is written for and on one it
// does not fit (the paper's × in Table II).
func ExampleLookup() {
	b, ok := baseline.Lookup("zb-h1")
	if !ok {
		panic("no zb-h1")
	}
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, SplitBackward: true})
	if err != nil {
		panic(err)
	}
	s, err := b.Build(spec.New(p, 16))
	if err != nil {
		panic(err)
	}
	if err := verify.Schedule(s); err != nil {
		panic(err)
	}
	m := schedule.Measure(s)
	fmt.Printf("%s: makespan %d, bubble rate %.2f%%, peak memory %v\n", b.Name, m.Makespan, 100*m.BubbleRate, m.PeakMemory)
	rate, period, err := baseline.SteadyBubbleRate(b, p)
	if err != nil {
		panic(err)
	}
	fmt.Printf("steady: period %g, bubble rate %.2f%%\n", period, 100*rate)

	x, err := placement.Builtin("x-shape", placement.Options{Devices: 4, SplitBackward: true})
	if err != nil {
		panic(err)
	}
	_, err = b.Build(spec.New(x, 16))
	fmt.Println(errors.Is(err, baseline.ErrNotApplicable), err)
	// Output:
	// zb-h1: makespan 51, bubble rate 5.88%, peak memory [4 4 4 4]
	// steady: period 3, bubble rate 0.00%
	// true zb-h1: placement "x-shape-split": not a v-shape pipeline: the blocks do not form one chain: not applicable
}
