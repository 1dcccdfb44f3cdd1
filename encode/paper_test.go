package encode

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/smttest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// optimalCase is one time-optimal (TO) search with its pinned optimum.
type optimalCase struct {
	shape        string
	fwd, bwd     int
	memory, n    int
	makespan     int
	slow         bool // skipped with -short
	bruteForceOK bool // small enough to cross-check by brute force
}

func (c optimalCase) String() string {
	return fmt.Sprintf("%s f%d b%d memory %d N=%d", c.shape, c.fwd, c.bwd, c.memory, c.n)
}

// runOptimal searches the case and checks what holds for every TO result:
// proven, verified by package schedule, makespan as pinned.
func runOptimal(t *testing.T, c optimalCase) (*placement.Placement, *schedule.Schedule, *smt.Solution) {
	t.Helper()
	pl := placementtest.Builtin(t, c.shape, placement.Options{Devices: 4, ForwardTime: c.fwd, BackwardTime: c.bwd})
	s, sol, err := Optimal(context.Background(), pl, c.n, c.memory, smt.Options{})
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("%v: schedule fails verification: %v", c, err)
	}
	if !sol.Proven || sol.LowerBound != sol.Makespan {
		t.Fatalf("%v: not proven (bounds %d..%d)", c, sol.LowerBound, sol.Makespan)
	}
	if got := schedule.Makespan(s); got != sol.Makespan {
		t.Fatalf("%v: schedule makespan %d, solution says %d", c, got, sol.Makespan)
	}
	if sol.Makespan != c.makespan {
		t.Fatalf("%v: optimal makespan %d, pinned %d", c, sol.Makespan, c.makespan)
	}
	if lb := rules.LowerBounds(spec.New(pl, c.n)).Makespan; sol.Makespan < lb {
		t.Fatalf("%v: makespan %d below the verifier's lower bound %d", c, sol.Makespan, lb)
	}
	return pl, s, sol
}

// TestPaperFig3VShapeTO: the time-optimal schedules behind Fig. 3, V-shape
// on 4 devices with forward time 1 and backward time 2, for growing N.
// Memory 16 never binds, and the optimum is 12 + 3(N−1): one micro-batch's
// critical path, then every further micro-batch adds the load 3 of a
// device. It equals the encoder's device bound (the last stage cannot
// start before time 3, is busy 3N, and is followed by 6 of backward work),
// which the test checks rather than assumes.
//
// Reference: §III-B, Fig. 3.
func TestPaperFig3VShapeTO(t *testing.T) {
	pinned := []int{12, 15, 18, 21, 24, 27, 30, 33} // N = 1..8
	for i, want := range pinned {
		n := i + 1
		c := optimalCase{shape: "v-shape", fwd: 1, bwd: 2, memory: 16, n: n, makespan: want}
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			pl, _, _ := runOptimal(t, c)
			if want != 12+3*(n-1) {
				t.Fatalf("pinned %d is not 12 + 3(N−1)", want)
			}
			if lb := InstanceProblem(spec.Spec{Placement: pl, Memory: 16}, AllInstances(spec.New(pl, n)), nil).LowerBound(); lb != want {
				t.Fatalf("device bound %d, optimum %d: the bound is not tight", lb, want)
			}
		})
	}
}

// TestPaperTightMemoryTO: with a budget that binds, the optimum exceeds
// every load bound. V-shape, 4 devices, forward 1, backward 3 (the paper's
// evaluation setting, §VI-A). With memory 1 device 0 holds one
// micro-batch at a time, so micro-batches run one after another (16 each):
// N·16, by that argument, for every N. Cases with N ≤ 3 are cross-checked
// by the brute force of the tests. (The solver's own answers at N = 4 and
// 8 under memory 2 and 3, which nothing here checks independently, are
// TestRegressionTightMemoryTO.)
//
// Reference: §III-A (memory constraints), §III-B.
func TestPaperTightMemoryTO(t *testing.T) {
	cases := []optimalCase{
		{memory: 1, n: 1, makespan: 16, bruteForceOK: true},
		{memory: 1, n: 2, makespan: 32, bruteForceOK: true},
		{memory: 1, n: 3, makespan: 48, bruteForceOK: true},
		{memory: 1, n: 4, makespan: 64},
		{memory: 1, n: 8, makespan: 128},
		{memory: 2, n: 2, makespan: 20, bruteForceOK: true},
		{memory: 2, n: 3, makespan: 32, bruteForceOK: true},
		{memory: 3, n: 2, makespan: 20, bruteForceOK: true},
		{memory: 3, n: 3, makespan: 24, bruteForceOK: true},
	}
	for _, c := range cases {
		c.shape, c.fwd, c.bwd = "v-shape", 1, 3
		t.Run(c.String(), func(t *testing.T) {
			pl, _, _ := runOptimal(t, c)
			if c.memory == 1 && c.makespan != 16*c.n {
				t.Fatalf("memory 1: pinned %d, want N·16", c.makespan)
			}
			if !c.bruteForceOK {
				if c.memory != 1 {
					t.Fatalf("memory %d, N=%d: no independent check (a regression case)", c.memory, c.n)
				}
				return
			}
			// The brute force with the orders of property 4.1, and for
			// N ≤ 2 (or without -short) without them too.
			p := InstanceProblem(spec.Spec{Placement: pl, Memory: c.memory}, AllInstances(spec.New(pl, c.n)), nil)
			free := *p
			free.Before = nil
			probs := []*smt.Problem{p}
			if c.n <= 2 || !testing.Short() {
				probs = append(probs, &free)
			}
			for _, q := range probs {
				opt := smttest.BruteForce(q)
				if opt == nil || q.Makespan(opt) != c.makespan {
					t.Fatalf("brute force (%d orders): %v, want makespan %d", len(q.Before), opt, c.makespan)
				}
			}
		})
	}
}

// TestRegressionTightMemoryTO pins the time-optimal search's own proven
// answers for the setting of TestPaperTightMemoryTO at N = 4 and 8 under
// memory 2 and 3. The paper gives no figures for them and the brute force
// is out of reach: they guard against a change of the solver's answer,
// and prove nothing about the paper.
func TestRegressionTightMemoryTO(t *testing.T) {
	for _, c := range []optimalCase{
		{memory: 2, n: 4, makespan: 36},
		{memory: 2, n: 8, makespan: 68},
		{memory: 3, n: 4, makespan: 32},
		{memory: 3, n: 8, makespan: 52},
	} {
		c.shape, c.fwd, c.bwd = "v-shape", 1, 3
		t.Run(c.String(), func(t *testing.T) { runOptimal(t, c) })
	}
}

// TestReferenceTimingsTO: the makespans the public Python Tessel's
// time-optimal search found (docs/reference-timings.md):
// v-shape, forward 1, backward 3, memory 16, N = 2, 4, 6, 8 → 20, 28, 36,
// 44; m-shape memory 16, N = 2 → 24, N = 4 → 36.
//
// Reference: §VI-C, Fig. 9 (the TO baseline).
func TestReferenceTimingsTO(t *testing.T) {
	cases := []optimalCase{
		{shape: "v-shape", n: 2, makespan: 20},
		{shape: "v-shape", n: 4, makespan: 28},
		{shape: "v-shape", n: 6, makespan: 36},
		{shape: "v-shape", n: 8, makespan: 44},
		{shape: "m-shape", n: 2, makespan: 24},
		{shape: "m-shape", n: 4, makespan: 36, slow: true}, // seconds
	}
	for _, c := range cases {
		c.fwd, c.bwd, c.memory = 1, 3, 16
		t.Run(c.String(), func(t *testing.T) {
			if c.slow {
				testskip.Short(t, "slow")
			}
			runOptimal(t, c)
		})
	}
}

// TestIssue9MShapeAndNNShapeBounds: with 6 micro-batches and memory 6
// (which does not bind), the barrier relaxation of LowerBound proves what
// the critical path and the device loads do not. m-shape: 48, met by a
// list schedule, so the time-optimal search needs no solver call. nn-shape:
// 60, i.e. at least 20 % bubbles (load 8 per micro-batch and device), the
// rate the paper reports for both TO and Tessel at N = 6.
//
// Reference: §VI-C ("both TO and Tessel reached 20% of the bubble rate of
// NN-Shape for 6 micro-batches").
func TestIssue9MShapeAndNNShapeBounds(t *testing.T) {
	for _, c := range []struct {
		shape string
		want  int
	}{{"m-shape", 48}, {"nn-shape", 60}} {
		pl := placementtest.Builtin(t, c.shape, placement.Options{})
		p := InstanceProblem(spec.Spec{Placement: pl, Memory: 6}, AllInstances(spec.New(pl, 6)), nil)
		if got := p.LowerBound(); got != c.want {
			t.Errorf("%s: lower bound %d, want %d", c.shape, got, c.want)
		}
		if got, _ := p.PathAndJackson(); got >= c.want {
			t.Errorf("%s: the bound without the barrier relaxation is already %d", c.shape, got)
		}
	}
	_, _, sol := runOptimal(t, optimalCase{shape: "m-shape", fwd: 1, bwd: 3, memory: 6, n: 6, makespan: 48})
	if sol.Checks != 0 {
		t.Errorf("m-shape: %d solver calls, want none (a list schedule meets the bound)", sol.Checks)
	}
}
