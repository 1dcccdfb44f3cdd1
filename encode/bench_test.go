package encode

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// benchOptimal times the whole time-optimal search (encoding, greedy
// bounds, binary search) of n micro-batches; it fails unless the result
// is proven.
func benchOptimal(b *testing.B, shape string, fwd, bwd, memory int, ns []int) {
	pl := placementtest.Builtin(b, shape, placement.Options{Devices: 4, ForwardTime: fwd, BackwardTime: bwd})
	for _, n := range ns {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var sol *smt.Solution
			for b.Loop() {
				var err error
				_, sol, err = Optimal(context.Background(), pl, n, memory, smt.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if !sol.Proven {
					b.Fatalf("not proven: %d..%d", sol.LowerBound, sol.Makespan)
				}
			}
			b.ReportMetric(float64(sol.Makespan), "makespan")
			b.ReportMetric(float64(sol.Checks), "checks/op")
		})
	}
}

// BenchmarkOptimalFig3: the paper's Fig. 3 setting (v-shape, forward 1,
// backward 2, memory 16), where the paper's TO search took 3752 s at N=16.
func BenchmarkOptimalFig3(b *testing.B) {
	benchOptimal(b, "v-shape", 1, 2, 16, []int{4, 8, 16})
}

// BenchmarkOptimalTightMemory: a budget that binds, so the solver must
// prove the load bounds unreachable.
func BenchmarkOptimalTightMemory(b *testing.B) {
	benchOptimal(b, "v-shape", 1, 3, 3, []int{4, 8})
}

// BenchmarkOptimalMShape: shard blocks on all devices; the Python TO took
// 4.0 s at N=2 and 83.8 s at N=4 (reference-timings.md).
func BenchmarkOptimalMShape(b *testing.B) {
	benchOptimal(b, "m-shape", 1, 3, 16, []int{2, 4})
}

// BenchmarkEncode times the binding itself: the encoding of the
// time-optimal problem of m-shape with 4 micro-batches (every term and
// assertion, no check), in one long-lived context, each round in a
// push/pop scope.
func BenchmarkEncode(b *testing.B) {
	pl := placementtest.Builtin(b, "m-shape", placement.Options{Devices: 4})
	prob := InstanceProblem(spec.Spec{Placement: pl, Memory: 16}, AllInstances(spec.New(pl, 4)), nil)
	x := z3.NewContext()
	defer x.Close()
	s, err := x.NewSolver(z3.SolverOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		s.Push()
		if _, err := smt.Encode(x, s, prob, nil); err != nil {
			b.Fatal(err)
		}
		s.Pop()
	}
}
