package search

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// The runner-up is the best other candidate by makespan, not the first listed:
// on the split v-shape (4 devices, 8 micro-batches, memory 4) a list
// schedule wins at 27, the first other candidate ends at 29, and ZB-H1 (Qi et
// al., Zero Bubble Pipeline Parallelism, §3) also reaches 27.
func TestRunnerUpIsTheBestOtherCandidate(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, SplitBackward: true})
	res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 4}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res.RunnerUp()
	if !ok {
		t.Fatal("no runner-up")
	}
	if got.Source != (Source{Kind: SourceBaseline, Name: "zb-h1"}) || got.Makespan != 27 {
		t.Errorf("runner-up %+v, want baseline zb-h1 at 27 (winner %s at %d)", got, res.Source, res.Makespan())
	}
	for _, c := range res.Contenders {
		if c.Source != res.Source.Unrefined() && c.Makespan < got.Makespan {
			t.Errorf("candidate %+v ends before the runner-up %+v", c, got)
		}
	}
	// Without other candidates there is no runner-up.
	modulo := Source{Kind: SourceConstruction, Name: "modulo"}
	if _, ok := (&Result{Source: modulo, Contenders: []Contender{{Source: modulo, Makespan: 3}}}).RunnerUp(); ok {
		t.Error("a lone winning seed has a runner-up")
	}
	// A refined winner is its candidate: the runner-up is another.
	refined := modulo
	refined.Refined = true
	listX := Source{Kind: SourceConstruction, Name: "list/x"}
	r := &Result{Source: refined, Contenders: []Contender{{Source: modulo, Makespan: 3}, {Source: listX, Makespan: 5}}}
	if got, _ := r.RunnerUp(); got.Source != listX {
		t.Errorf("refined winner: runner-up %+v", got)
	}
}

// tessel optimal names what proves its bound. On the v-shape (4 devices,
// 4 micro-batches) under memory 3 the relaxations and the memory bound
// give 28 and the optimum is 32: solver calls refuted every makespan
// below 32. Without a budget the optimum meets a device's load bound.
func TestOptimalNamesItsBound(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	for _, c := range []struct {
		memory, makespan, relaxed int
		solver                    bool
		by                        string
	}{
		{3, 32, 28, true, "solver calls that found no shorter schedule"},
		{0, 28, 28, false, "a device's load"},
	} {
		res, err := Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 4, Memory: c.memory}, OptimalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := res.Bound
		if b.Makespan != c.makespan || b.Relaxed != c.relaxed || b.Solver != c.solver || b.By != c.by {
			t.Errorf("memory %d: bound %+v, want %d by %q (relaxations %d, solver %v)", c.memory, b, c.makespan, c.by, c.relaxed, c.solver)
		}
		if !res.Solution.Proven || schedule.Makespan(res.Schedule) != c.makespan {
			t.Errorf("memory %d: makespan %d, proven %v", c.memory, schedule.Makespan(res.Schedule), res.Solution.Proven)
		}
	}
}
