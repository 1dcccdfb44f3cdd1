package solve_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/solve"
	"github.com/tessel-pp/tessel/spec"
)

// Every refusal comes before any search and is bad input, in the words
// the command prints.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	v := spec.Source{Name: "v-shape", Devices: 4, ForwardTime: 1, BackwardTime: 3, InputTime: 1, WeightTime: 1, Chunks: 1, Order: "loop"}
	exists := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(exists, []byte("{}"), 0o644)
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"micro-batches", func() error {
			return solve.Search(ctx, solve.SearchOptions{Placement: v, Method: "joint"}, io.Discard)
		}, "--micro-batches must be at least 1, got 0"},
		{"jobs with joint", func() error {
			return solve.Search(ctx, solve.SearchOptions{Placement: v, MicroBatches: 8, Method: "joint", Jobs: 2}, io.Discard)
		}, "search: --jobs sets the workers of the enumerate and race methods"},
		{"method", func() error {
			return solve.Search(ctx, solve.SearchOptions{Placement: v, MicroBatches: 8, Method: "guess"}, io.Discard)
		}, "search: "},
		{"out exists", func() error {
			return solve.Search(ctx, solve.SearchOptions{Placement: v, MicroBatches: 8, Method: "joint", Objective: "makespan", Outputs: outfile.Schedule{Out: exists}}, io.Discard)
		}, "exists (use --force to overwrite it)"},
		{"optimal memory", func() error {
			return solve.Optimal(ctx, solve.OptimalOptions{Placement: v, MicroBatches: 2, Memory: -1}, io.Discard)
		}, "--memory must be at least 0, got -1"},
		{"replan without schedule", func() error { return solve.Replan(ctx, solve.ReplanOptions{}, io.Discard) }, "replan: --schedule FILE is required"},
	} {
		err := c.run()
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input containing %q", c.name, err, c.want)
		}
	}
	if b, _ := os.ReadFile(exists); string(b) != "{}" {
		t.Error("a refused search changed the file")
	}
}
