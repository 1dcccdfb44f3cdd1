package solve_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/solve"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// tessel search as a library call: the schedule of a built-in placement,
// written to a file (its report, here discarded, is what the command
// prints) and read back verified.
func ExampleSearch() {
	dir, err := os.MkdirTemp("", "solve")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "s.json")
	err = solve.Search(context.Background(), solve.SearchOptions{
		Placement:    spec.Source{Name: "v-shape", Devices: 4, ForwardTime: 1, BackwardTime: 3, InputTime: 1, WeightTime: 1, Chunks: 1, Order: "loop"},
		MicroBatches: 8, Memory: 4, Method: string(solve.DefaultMethod),
		Outputs: outfile.Schedule{Out: out},
	}, io.Discard)
	if err != nil {
		panic(err)
	}
	s, err := verify.Load(out)
	if err != nil {
		panic(err)
	}
	fmt.Println("makespan", schedule.Makespan(s))
	// Output:
	// makespan 44
}
