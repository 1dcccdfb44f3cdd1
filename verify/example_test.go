package verify_test

import (
	"fmt"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// The verifier checks a schedule from its placement and start times
// alone, never from how it was built: 1F1B passes, and the same schedule
// with one backward moved before the forward it needs fails with the rule
// it breaks.
func ExampleSchedule() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		panic(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 4))
	if err != nil {
		panic(err)
	}
	fmt.Println("1f1b:", verify.Schedule(s))
	m := schedule.Measure(s)
	fmt.Printf("makespan %d, bubble rate %.2f%%, peak memory %v\n", m.Makespan, 100*m.BubbleRate, m.PeakMemory)

	bad := *s
	bad.Instances = append([]schedule.Instance(nil), s.Instances...)
	for i, in := range bad.Instances {
		if p.Blocks[in.Block].ID == "b1" && in.Micro == 0 {
			bad.Instances[i].Start = 0
		}
	}
	fmt.Println("moved:", verify.Schedule(&bad))
	// Output:
	// 1f1b: <nil>
	// makespan 20, bubble rate 20.00%, peak memory [2 1]
	// moved: invalid schedule: dependency f1 -> b1 broken for micro-batch 0: f1^0 ends at 2, b1^0 starts at 0 (and 1 more violation)
}
