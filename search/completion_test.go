package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Reference: eq. 5 and 6 — warmup, N − N_R + 1 iterations and cooldown
// hold every instance of N micro-batches exactly once.
func TestPaperEq5Eq6PhasesPartitionTheInstances(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	offs := []int{3, 3, 3, 2, 2, 1, 1, 0}
	nr := 4
	for _, n := range []int{4, 5, 9} {
		seen := map[schedule.Ref]string{}
		add := func(phase string, r schedule.Ref) {
			if prev, ok := seen[r]; ok {
				t.Fatalf("N=%d: %v in %s and %s", n, r, prev, phase)
			}
			seen[r] = phase
		}
		for _, r := range Warmup(p, offs) {
			if r.Micro >= offs[r.Block] {
				t.Errorf("warmup holds %v, not below offset %d", r, offs[r.Block])
			}
			add("warmup", r)
		}
		for k := 0; k < n-nr+1; k++ {
			for i := range p.Blocks {
				add("repetend", schedule.Ref{Block: i, Micro: offs[i] + k})
			}
		}
		for _, r := range Cooldown(p, offs, nr, n) {
			add("cooldown", r)
		}
		if len(seen) != n*p.K() {
			t.Errorf("N=%d: %d instances, want %d", n, len(seen), n*p.K())
		}
		for r := range seen {
			if r.Micro < 0 || r.Micro >= n {
				t.Errorf("N=%d: instance %v out of range", n, r)
			}
		}
	}
}

// paperCase is one of the settings of the paper's evaluation on 4 devices.
type paperCase struct {
	name        string
	nr, memory  int
	inference   bool
	skipInShort bool
}

// Reference: §VI-B, Fig. 8 and Table II — Tessel finds repetends with no
// bubbles for the training placements of GPT (M-shape), mT5 (NN-shape)
// and Flava (K-shape), and for V- and X-shape, with the paper's N_R and
// memory; the full schedule for 128 micro-batches is valid and keeps
// every device within its budget.
func TestPaperTrainingReachesZeroBubbles(t *testing.T) {
	runPaperCases(t, []paperCase{
		{name: "v-shape", nr: 4, memory: 4},
		{name: "x-shape", nr: 3, memory: 4},
		{name: "k-shape", nr: 3, memory: 6},
		{name: "m-shape", nr: 6, memory: 6},
		{name: "nn-shape", nr: 6, memory: 6, skipInShort: true},
	})
}

// Reference: §VI-B, Fig. 8 (right column) — inference schedules reach
// zero bubbles too.
func TestPaperInferenceReachesZeroBubbles(t *testing.T) {
	runPaperCases(t, []paperCase{
		{name: "v-shape", nr: 4, memory: 4, inference: true},
		{name: "x-shape", nr: 3, memory: 4, inference: true},
		{name: "k-shape", nr: 2, memory: 4, inference: true},
		{name: "m-shape", nr: 6, memory: 4, inference: true},
		{name: "nn-shape", nr: 6, memory: 4, inference: true},
	})
}

func runPaperCases(t *testing.T, cases []paperCase) {
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/infer=%v", c.name, c.inference), func(t *testing.T) {
			if c.skipInShort {
				testskip.Short(t, "solver-heavy")
			}
			p := placementtest.Builtin(t, c.name, placement.Options{Inference: c.inference})
			n := 128
			res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: c.memory}, Options{MaxNR: c.nr})
			if err != nil {
				t.Fatal(err)
			}
			if got := schedule.RepetendBubbleRate(p, res.Repetend.Period); got != 0 {
				t.Errorf("repetend bubble rate %.4f, want 0 (period %d, loads %v)", got, res.Repetend.Period, p.Loads())
			}
			if res.Repetend.Period != p.MaxLoad() {
				t.Errorf("period %d, want the max load %d", res.Repetend.Period, p.MaxLoad())
			}
			if res.Repetend.NR > c.nr {
				t.Errorf("N_R %d above the limit %d", res.Repetend.NR, c.nr)
			}
			s := res.Schedule
			if err := verify.Schedule(s); err != nil {
				t.Fatal(err)
			}
			m := schedule.Measure(s)
			for d, peak := range m.PeakMemory {
				if peak > c.memory {
					t.Errorf("device %d peaks at %d > budget %d", d, peak, c.memory)
				}
			}
			if s.MicroBatches != n || len(s.Instances) != n*p.K() {
				t.Errorf("%d micro-batches, %d instances", s.MicroBatches, len(s.Instances))
			}
			if lb := rules.LowerBounds(spec.New(p, n)).Makespan; m.Makespan < lb {
				t.Errorf("makespan %d below the lower bound %d", m.Makespan, lb)
			}
			// The schedule of least makespan need not repeat the
			// repetend of least period; when it says it repeats one,
			// the verifier has checked it.
			if s.Repetend != nil && s.Repetend.Iterations != n-s.Repetend.NR+1 {
				t.Errorf("repetend metadata %+v", s.Repetend)
			}
		})
	}
}

// A placement written by hand with two branches that join into a block
// on all devices and fork again, and one with unequal block times: the
// Tessel schedule for a few micro-batches is valid and never beats the
// proven time-optimal one (which would mean a broken verifier or bound).
func TestHandWrittenPlacementsAgainstTimeOptimal(t *testing.T) {
	for _, c := range []struct {
		file   string
		memory int
		nr     int
	}{{"join-fork.json", 6, 3}, {"unequal.json", 4, 4}} {
		p, err := placement.Load("../testdata/placements/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{c.nr, c.nr + 1} {
			res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: c.memory}, Options{MaxNR: c.nr})
			if err != nil {
				t.Fatalf("%s N=%d: %v", c.file, n, err)
			}
			if err := verify.Schedule(res.Schedule); err != nil {
				t.Fatalf("%s N=%d: %v", c.file, n, err)
			}
			opt, err := Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: c.memory}, OptimalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			to, sol := opt.Schedule, opt.Solution
			if err := verify.Schedule(to); err != nil {
				t.Fatal(err)
			}
			got := schedule.Makespan(res.Schedule)
			if sol.Proven && got < sol.Makespan {
				t.Errorf("%s N=%d: Tessel makespan %d beats the proven optimum %d", c.file, n, got, sol.Makespan)
			}
			// The repetend's period can never beat what one more
			// micro-batch costs the optimum in the long run: max load.
			if res.Repetend.Period < p.MaxLoad() {
				t.Errorf("%s: period %d below max load %d", c.file, res.Repetend.Period, p.MaxLoad())
			}
			t.Logf("%s N=%d: Tessel %d, time-optimal %d (proven %v), period %d, max load %d", c.file, n, got, sol.Makespan, sol.Proven, res.Repetend.Period, p.MaxLoad())
		}
	}
}

// randomPlacement draws a small DAG placement: a few blocks on one device
// or on a group, random times and memory, dependencies from lower to
// higher index.
func randomPlacement(rng *rand.Rand, id int) *placement.Placement {
	d := 2 + rng.Intn(2)
	k := 3 + rng.Intn(4)
	p := &placement.Placement{Name: fmt.Sprintf("random-%d", id), Devices: d}
	for i := 0; i < k; i++ {
		var devs []int
		if rng.Intn(5) == 0 {
			for x := 0; x < d; x++ {
				devs = append(devs, x)
			}
		} else {
			devs = []int{rng.Intn(d)}
		}
		kind, mem := placement.Forward, 1
		if i >= k/2 {
			kind, mem = placement.Backward, -1
		}
		if rng.Intn(4) == 0 {
			mem = 0
		}
		p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("b%d", i), Kind: kind, Devices: devs, Time: 1 + rng.Intn(3), Memory: mem})
	}
	for j := 1; j < k; j++ {
		p.Deps = append(p.Deps, placement.Dep{From: rng.Intn(j), To: j})
		if j >= 2 && rng.Intn(3) == 0 {
			a := rng.Intn(j)
			dup := false
			for _, e := range p.Deps {
				dup = dup || (e.From == a && e.To == j)
			}
			if !dup {
				p.Deps = append(p.Deps, placement.Dep{From: a, To: j})
			}
		}
	}
	return p
}

// Property: for random small DAG placements, every schedule the search
// emits passes the verifier and is never shorter than the proven lower
// bound, and the search refuses a budget only where the micro-batches do
// not fit one after another (sequentialFits, by brute force).
func TestPropertyRandomPlacements(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	cases := 40
	if testing.Short() {
		cases = 10
	}
	fitting, refused := 0, 0
	for id := 0; id < cases; id++ {
		p := randomPlacement(rng, id)
		if err := p.Validate(); err != nil {
			t.Fatalf("generator made an invalid placement: %v", err)
		}
		memory := []int{0, 2, 3}[rng.Intn(3)]
		n := []int{1, 3, 6}[rng.Intn(3)]
		method := []repetend.Strategy{repetend.StrategyJoint, repetend.StrategyEnumerate}[rng.Intn(2)]
		res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, Options{MaxNR: 3, Strategy: method, Jobs: 2})
		seq := sequentialFits(p, n, memory)
		if seq {
			fitting++
		}
		if err != nil {
			// A budget may admit no schedule at all; that must be the
			// reported reason, and running the micro-batches one after
			// another (checked by brute force) must not fit either.
			if memory > 0 && (errors.Is(err, ErrNoRepetend) || errors.Is(err, ErrNoFit)) && !seq {
				refused++
				continue
			}
			t.Fatalf("%s memory %d N=%d %s (one after another fits: %v): %v", p.Name, memory, n, method, seq, err)
		}
		if err := verify.Schedule(res.Schedule); err != nil {
			t.Fatalf("%s memory %d N=%d: %v", p.Name, memory, n, err)
		}
		if mk, lb := schedule.Makespan(res.Schedule), rules.LowerBounds(spec.New(p, n)).Makespan; mk < lb {
			t.Fatalf("%s N=%d: makespan %d below the lower bound %d", p.Name, n, mk, lb)
		}
	}
	// Both sides of the check are exercised: placements where the
	// micro-batches fit one after another (the search must answer) and
	// budgets the search refuses.
	if fitting == 0 || (!testing.Short() && refused == 0) {
		t.Errorf("%d cases fit one after another, %d refused: the property checks less than it says", fitting, refused)
	}
}

// A cap of a single resource unit on every solver call (Options.Effort,
// PhaseEffort) still answers: Z3 runs out before its search proper and
// says "unknown", which under a cap is the cap's (z3.ErrEffort), so the
// constructions' schedule stands instead of an error.
func TestSearchTinyEffort(t *testing.T) {
	for _, name := range []string{"m-shape", "x-shape", "v-shape"} {
		p := placementtest.WithTransfers(placementtest.Builtin(t, name, placement.Options{Devices: 4}), 1, false)
		p.Transfers[p.Deps[1]] *= 10 // one slow link, as after a replan
		if p.Shares(p.Deps[1].From, p.Deps[1].To) {
			t.Fatalf("%s: dependency 1 is on one device", name)
		}
		res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 32, Memory: 6}, Options{Effort: 1, PhaseEffort: 1, RefineEffort: -1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := verify.Schedule(res.Schedule); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
