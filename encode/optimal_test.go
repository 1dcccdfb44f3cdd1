package encode

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/smttest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
	"github.com/tessel-pp/tessel/z3"
)

// bestGreedy is the makespan of the best list schedule the search starts
// from, or -1 when none is found.
func bestGreedy(p *smt.Problem) int {
	best := -1
	for _, g := range smt.GreedyAll(p) {
		if m := p.Makespan(g); best < 0 || m < best {
			best = m
		}
	}
	return best
}

// checkOptimal asserts that sol is a proven optimum of makespan want.
func checkOptimal(t *testing.T, what string, p *smt.Problem, sol *smt.Solution, want int) {
	t.Helper()
	if err := smttest.CheckStarts(p, sol.Starts); err != nil {
		t.Fatalf("%s: infeasible schedule %v: %v\n%s", what, sol.Starts, err, smttest.String(p))
	}
	if got := p.Makespan(sol.Starts); got != sol.Makespan {
		t.Fatalf("%s: Makespan %d, the starts give %d", what, sol.Makespan, got)
	}
	if sol.Makespan != want || !sol.Proven || sol.LowerBound != want {
		t.Fatalf("%s: makespan %d (lower bound %d, proven %v), brute force %d\n%s",
			what, sol.Makespan, sol.LowerBound, sol.Proven, want, smttest.String(p))
	}
}

// TestMinimizeMakespanMatchesBruteForce compares the search with the
// brute force on random small problems. Problems the greedy schedules and
// the lower bound settle alone need no solver, so most of those are
// skipped in favour of the ones that exercise the encoding.
func TestMinimizeMakespanMatchesBruteForce(t *testing.T) {
	want := 160
	if testing.Short() {
		want = 40
	}
	r := rand.New(rand.NewPCG(7, 8))
	var infeasible, beyondGreedy, greedyWorse, boundLoose, easy, solved int
	for k := 0; solved < want; k++ {
		p := smttest.RandomProblem(r, smttest.GenOptions{Before: k%2 == 0, Lags: k%3 == 0, Release: k%4 == 0, Entry: k%5 == 0})
		opt := smttest.BruteForce(p)
		g := bestGreedy(p)
		lb := p.LowerBound()
		switch {
		case opt == nil:
			if infeasible >= want/4 {
				continue
			}
			infeasible++
		case g < 0:
			beyondGreedy++
		case g > p.Makespan(opt):
			greedyWorse++
		case lb < g:
			boundLoose++
		default:
			if k%8 != 0 {
				continue
			}
			easy++
		}
		solved++
		what := fmt.Sprintf("problem %d", k)
		sol, err := smt.MinimizeMakespan(context.Background(), p, smt.Options{Seed: k})
		if opt == nil {
			if !errors.Is(err, smt.ErrInfeasible) {
				t.Fatalf("%s: infeasible, got %+v, %v\n%s", what, sol, err, smttest.String(p))
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, smttest.String(p))
		}
		checkOptimal(t, what, p, sol, p.Makespan(opt))
	}
	t.Logf("%d searches: %d infeasible, %d beyond greedy, %d with greedy worse than optimal, %d with a loose bound, %d easy",
		solved, infeasible, beyondGreedy, greedyWorse, boundLoose, easy)
	if infeasible == 0 || greedyWorse == 0 || boundLoose == 0 {
		t.Fatal("the generator no longer produces every kind of problem")
	}
}

// randomPlacement: 2–3 devices, 2–4 blocks of time 1–3 and memory −1..1,
// sometimes one on two devices, a random DAG of dependencies.
func randomPlacement(r *rand.Rand) *placement.Placement {
	p := &placement.Placement{Name: "random", Devices: 2 + r.IntN(2)}
	k := 2 + r.IntN(3)
	for i := 0; i < k; i++ {
		b := placement.Block{ID: fmt.Sprintf("b%d", i), Kind: placement.Forward, Time: 1 + r.IntN(3), Memory: r.IntN(3) - 1}
		if r.IntN(4) == 0 {
			devs := r.Perm(p.Devices)[:2]
			sort.Ints(devs)
			b.Devices = devs
		} else {
			b.Devices = []int{r.IntN(p.Devices)}
		}
		p.Blocks = append(p.Blocks, b)
	}
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			if r.IntN(2) == 0 {
				p.Deps = append(p.Deps, placement.Dep{From: i, To: j})
			}
		}
	}
	return p
}

// instanceSets lists the subsets of instances tessel hands to
// InstanceProblem: all of N micro-batches, and the warmup and cooldown of
// a repetend with offsets obeying property 4.2 (a dependency never points
// from a lower offset to a higher one).
func instanceSets(r *rand.Rand, p *placement.Placement, n int) map[string][]schedule.Ref {
	nr := n
	offsets := make([]int, len(p.Blocks))
	preds := p.Preds()
	for i := range p.Blocks { // blocks are in topological order
		hi := nr - 1
		for _, q := range preds[i] {
			hi = min(hi, offsets[q])
		}
		offsets[i] = r.IntN(hi + 1)
	}
	var warm, cool []schedule.Ref
	for m := 0; m < n; m++ {
		for i := range p.Blocks {
			if m < offsets[i] {
				warm = append(warm, schedule.Ref{Block: i, Micro: m})
			}
			if m > offsets[i]+n-nr {
				cool = append(cool, schedule.Ref{Block: i, Micro: m})
			}
		}
	}
	return map[string][]schedule.Ref{"all": AllInstances(spec.New(p, n)), "warmup": warm, "cooldown": cool}
}

// TestSymmetryBreakingKeepsOptimum: the Before orders InstanceProblem adds
// (property 4.1) never change the optimum, by brute force with and
// without them, and the search with them finds that optimum.
func TestSymmetryBreakingKeepsOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	cases := 60
	if testing.Short() {
		cases = 15
	}
	searched, infeasible := 0, 0
	for k := 0; k < cases; k++ {
		pl := randomPlacement(r)
		if err := pl.Validate(); err != nil {
			t.Fatalf("placement %d: %v", k, err)
		}
		n := 8 / len(pl.Blocks)
		memory := r.IntN(4)
		sets := instanceSets(r, pl, n)
		for _, name := range []string{"all", "warmup", "cooldown"} {
			refs := sets[name]
			if len(refs) == 0 {
				continue
			}
			what := fmt.Sprintf("placement %d %+v, %s of %d micro-batches, memory %d", k, pl, name, n, memory)
			with := InstanceProblem(spec.Spec{Placement: pl, Memory: memory}, refs, nil)
			without := *with
			without.Before = nil
			optWith, optWithout := smttest.BruteForce(with), smttest.BruteForce(&without)
			if (optWith == nil) != (optWithout == nil) {
				t.Fatalf("%s: feasible with the orders %v, without %v", what, optWith != nil, optWithout != nil)
			}
			if optWith == nil {
				infeasible++
				continue
			}
			if a, b := with.Makespan(optWith), without.Makespan(optWithout); a != b {
				t.Fatalf("%s: optimum %d with the orders, %d without", what, a, b)
			}
			if name != "all" && k%3 != 0 {
				continue // the solver on a third of the subsets is enough
			}
			searched++
			sol, err := smt.MinimizeMakespan(context.Background(), with, smt.Options{})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkOptimal(t, what, &without, sol, without.Makespan(optWithout))
		}
	}
	t.Logf("%d searches, %d infeasible sets", searched, infeasible)
}

// findProblem draws random problems until one satisfies ok.
func findProblem(t *testing.T, seed uint64, ok func(p *smt.Problem, opt []int) bool) (*smt.Problem, []int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	for k := 0; k < 10000; k++ {
		p := smttest.RandomProblem(r, smttest.GenOptions{})
		if opt := smttest.BruteForce(p); ok(p, opt) {
			return p, opt
		}
	}
	t.Fatal("no problem found")
	return nil, nil
}

// TestHintIsUsed: with no time to search, the result is the better of the
// hint and the greedy schedules; a bad hint is ignored.
func TestHintIsUsed(t *testing.T) {
	// Greedy is beaten by the optimum, and the bound does not prove it.
	p, opt := findProblem(t, 11, func(p *smt.Problem, opt []int) bool {
		g := bestGreedy(p)
		return opt != nil && g > p.Makespan(opt) && p.LowerBound() < p.Makespan(opt)
	})
	g := bestGreedy(p)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	bad := slices.Clone(opt)
	bad[0] = -1 // before time 0, and before its release
	for _, c := range []struct {
		name string
		hint []int
		want int
	}{
		{"optimal hint", opt, p.Makespan(opt)},
		{"no hint", nil, g},
		{"infeasible hint", bad, g},
		{"short hint", opt[1:], g},
	} {
		t.Run(c.name, func(t *testing.T) {
			sol, err := smt.MinimizeMakespan(cancelled, p, smt.Options{Hint: c.hint})
			if err != nil {
				t.Fatal(err)
			}
			if sol.Makespan != c.want || sol.Proven {
				t.Fatalf("makespan %d proven %v, want %d unproven\n%s", sol.Makespan, sol.Proven, c.want, smttest.String(p))
			}
			if err := smttest.CheckStarts(p, sol.Starts); err != nil {
				t.Fatal(err)
			}
			if sol.LowerBound != p.LowerBound() {
				t.Fatalf("lower bound %d, want the static one %d", sol.LowerBound, p.LowerBound())
			}
		})
	}
	// With time, the hint ends in a proven optimum.
	sol, err := smt.MinimizeMakespan(context.Background(), p, smt.Options{Hint: opt})
	if err != nil {
		t.Fatal(err)
	}
	checkOptimal(t, "with time", p, sol, p.Makespan(opt))
}

func TestProgress(t *testing.T) {
	p, opt := findProblem(t, 12, func(p *smt.Problem, opt []int) bool {
		return opt != nil && bestGreedy(p) > p.Makespan(opt) && p.LowerBound() < p.Makespan(opt)
	})
	var calls [][2]int
	sol, err := smt.MinimizeMakespan(context.Background(), p, smt.Options{Progress: func(lo, hi int) {
		calls = append(calls, [2]int{lo, hi})
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkOptimal(t, "search", p, sol, p.Makespan(opt))
	if len(calls) == 0 {
		t.Fatal("Progress never called")
	}
	if calls[0] != [2]int{p.LowerBound(), bestGreedy(p)} {
		t.Fatalf("first progress %v, want [lower bound, greedy] = [%d %d]", calls[0], p.LowerBound(), bestGreedy(p))
	}
	for i, c := range calls {
		if c[0] > c[1] || c[0] > sol.Makespan || c[1] < sol.Makespan {
			t.Fatalf("progress %d: %v does not bracket the optimum %d", i, c, sol.Makespan)
		}
		if i > 0 && (c[0] < calls[i-1][0] || c[1] > calls[i-1][1]) {
			t.Fatalf("progress %d: %v widens %v", i, c, calls[i-1])
		}
	}
	if len(calls) > sol.Checks {
		t.Fatalf("%d progress calls for %d checks", len(calls), sol.Checks)
	}
}

// TestCancelledWithNothingFound: when no greedy schedule exists (a
// precedence with a positive lag is beyond them) an interrupted search has
// nothing to return and says why.
func TestCancelledWithNothingFound(t *testing.T) {
	p := &smt.Problem{Devices: 2, Tasks: []smt.Task{
		{Devices: []int{0}, Time: 3}, {Devices: []int{1}, Time: 2}, {Devices: []int{0, 1}, Time: 1},
	}, Precs: []smt.Prec{{From: 0, To: 1, Lag: 2}, {From: 1, To: 2}}}
	if smt.Greedy(p) != nil {
		t.Fatal("Greedy handles positive lags now: pick another problem")
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	sol, err := smt.MinimizeMakespan(cancelled, p, smt.Options{})
	if sol != nil || !errors.Is(err, z3.ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want no solution and an interruption", sol, err)
	}
	// With time: task 1 may start 2 before task 0 ends, at 1; the group
	// task then runs at 3, after both.
	sol, err = smt.MinimizeMakespan(context.Background(), p, smt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkOptimal(t, "with time", p, sol, 4)
}

// hardPlacement, hardN and hardMemory make a search that takes seconds:
// m-shape, 6 micro-batches, a memory budget that binds (with a loose one
// the lower bound is met by a list schedule).
const (
	hardN      = 6
	hardMemory = 3
)

func hardPlacement(t testing.TB) *placement.Placement {
	return placementtest.Builtin(t, "m-shape", placement.Options{})
}

// hardProblem is the instance problem of that search.
func hardProblem(t testing.TB) *smt.Problem {
	pl := hardPlacement(t)
	return InstanceProblem(spec.Spec{Placement: pl, Memory: hardMemory}, AllInstances(spec.New(pl, hardN)), nil)
}

// TestDeadlineReturnsBest: a search cut short returns a feasible schedule
// of the placement, not proven, soon after its deadline.
func TestDeadlineReturnsBest(t *testing.T) {
	pl := hardPlacement(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	s, sol, err := Optimal(ctx, pl, hardN, hardMemory, smt.Options{})
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if took > 3*time.Second {
		t.Fatalf("search ran %v past a 300ms deadline", took)
	}
	if sol.Proven {
		testskip.Skipf(t, "proved in %v: the machine is fast enough to need a harder problem", took)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	if sol.LowerBound > sol.Makespan || schedule.Makespan(s) != sol.Makespan {
		t.Fatalf("bounds %d..%d, schedule makespan %d", sol.LowerBound, sol.Makespan, schedule.Makespan(s))
	}
}

// TestEffortSearchIsDeterministic: a search capped by Effort stops at the
// same point on every run, unlike one capped by time.
func TestEffortSearchIsDeterministic(t *testing.T) {
	p := hardProblem(t)
	var sols []*smt.Solution
	for i := 0; i < 2; i++ {
		sol, err := smt.MinimizeMakespan(context.Background(), p, smt.Options{Effort: 100000})
		if err != nil {
			t.Fatal(err)
		}
		if err := smttest.CheckStarts(p, sol.Starts); err != nil {
			t.Fatal(err)
		}
		sols = append(sols, sol)
	}
	a, b := sols[0], sols[1]
	if a.Proven {
		t.Fatalf("proven with a tiny effort: %+v", a)
	}
	if !slices.Equal(a.Starts, b.Starts) || a.Makespan != b.Makespan || a.LowerBound != b.LowerBound || a.Checks != b.Checks {
		t.Fatalf("runs differ: %d..%d in %d checks, then %d..%d in %d checks",
			a.LowerBound, a.Makespan, a.Checks, b.LowerBound, b.Makespan, b.Checks)
	}
}
