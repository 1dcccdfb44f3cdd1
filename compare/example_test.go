package compare_test

import (
	"context"
	"os"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
)

// Tessel beside every baseline on the placement of GPT's shared
// embedding, each schedule verified; the table is tessel compare's
// (--format markdown), search times masked so that it reads the same on
// every run.
func ExampleRun() {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		panic(err)
	}
	cmp, err := compare.Run(context.Background(), p, compare.Options{MicroBatches: 32, Memory: 6})
	if err != nil {
		panic(err)
	}
	cmp.MaskTimes = true
	if err := report.WriteComparison(os.Stdout, cmp, "markdown"); err != nil {
		panic(err)
	}
	// Output:
	// | method           | placement | N  | repetend bubble rate | makespan | bubble rate | peak memory   | budget respected | search time | note                                          |
	// |:-----------------|:----------|:---|:---------------------|:---------|:------------|:--------------|:-----------------|:------------|:----------------------------------------------|
	// | GPipe            | m-shape   | 32 | 0.00%                | 204      | 5.88%       | [32 32 32 32] | no               | -           | steady period 6; does not adapt to the budget |
	// | 1F1B             | m-shape   | 32 | ×                    | ×        | ×           | ×             | ×                | -           | no straightforward adaptation to m-shape      |
	// | 1F1B interleaved | m-shape   | 32 | ×                    | ×        | ×           | ×             | ×                | -           | no straightforward adaptation to m-shape      |
	// | Chimera-direct   | m-shape   | 32 | ×                    | ×        | ×           | ×             | ×                | -           | no straightforward adaptation to m-shape      |
	// | 1F1B+            | m-shape   | 32 | 25.00%               | 262      | 26.72%      | [4 3 2 1]     | yes              | -           | steady period 8                               |
	// | Tessel           | m-shape   | 32 | 0.00%                | 204      | 5.88%       | [5 4 2 1]     | yes              | <time>      | N_R 6, period 6; schedule from modulo         |
}
