package search

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
)

// The runner-up is the best other seed by makespan, not the first listed:
// on the split v-shape (4 devices, 8 micro-batches, memory 4) a list
// schedule wins at 27, the first other seed ends at 29, and ZB-H1 (Qi et
// al., Zero Bubble Pipeline Parallelism, §3) also reaches 27.
func TestRunnerUpIsTheBestOtherSeed(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, SplitBackward: true})
	res, err := Run(context.Background(), p, Options{Memory: 4, MicroBatches: 8})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res.RunnerUp()
	if !ok {
		t.Fatal("no runner-up")
	}
	if got.Name != "baseline zb-h1" || got.Makespan != 27 {
		t.Errorf("runner-up %+v, want baseline zb-h1 at 27 (winner %s at %d)", got, res.Source, res.Makespan())
	}
	for _, sd := range res.Seeds {
		if sd.Name != res.Source && sd.Makespan < got.Makespan {
			t.Errorf("seed %+v ends before the runner-up %+v", sd, got)
		}
	}
	// Without other seeds there is no runner-up.
	if _, ok := (&Result{Source: "modulo", Seeds: []Seed{{Name: "modulo", Makespan: 3}}}).RunnerUp(); ok {
		t.Error("a lone winning seed has a runner-up")
	}
	// A refined winner is its seed: the runner-up is another.
	r := &Result{Source: "modulo, refined", Seeds: []Seed{{Name: "modulo", Makespan: 3}, {Name: "list/x", Makespan: 5}}}
	if got, _ := r.RunnerUp(); got.Name != "list/x" {
		t.Errorf("refined winner: runner-up %+v", got)
	}
}
