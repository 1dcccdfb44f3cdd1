package search

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Reference: She et al., Automatic Operator-level Parallelism Planning
// for Distributed Deep Learning – A Mixed-Integer Programming Approach,
// §V-A, Figs. 3–5: DualPipe's placement, F = I = W = 1, memory PP + 1
// activations, 10 micro-batches for PP = 4 and 20 for PP = 8 (5 and 10
// pairs: one micro-batch of the dualpipe placement is a pair). Their
// MIP halves DualPipe's bubble, 2(PP/2 − 1), to PP/2 − 1 per device, and
// doubling the memory to 2(PP + 1) does not help. The search reaches
// PP/2 − 1 at both budgets (bubble per device: makespan − the device's
// load, in units of F), which is the makespan's lower bound.
func TestPaperMIPHalvesDualPipeBubble(t *testing.T) {
	for _, c := range []struct{ pp, pairs int }{{4, 5}, {8, 10}} {
		p, err := placement.Builtin("dualpipe", placement.Options{Devices: c.pp})
		if err != nil {
			t.Fatal(err)
		}
		for _, memory := range []int{c.pp + 1, 2 * (c.pp + 1)} {
			res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: c.pairs, Memory: memory}, Options{})
			if err != nil {
				t.Fatalf("PP=%d memory %d: %v", c.pp, memory, err)
			}
			loads := p.Loads()
			bubble := res.Makespan() - c.pairs*loads[0]
			for _, l := range loads {
				if l != loads[0] {
					t.Fatalf("PP=%d: devices have different loads %v", c.pp, loads)
				}
			}
			if bubble > c.pp/2-1 {
				t.Errorf("PP=%d memory %d: bubble per device %d, want at most PP/2−1 = %d", c.pp, memory, bubble, c.pp/2-1)
			}
			if res.Gap() != 0 {
				t.Errorf("PP=%d memory %d: makespan %d, lower bound %d", c.pp, memory, res.Makespan(), res.Bounds.Makespan)
			}
			if err := verify.Schedule(res.Schedule); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Anytime: a search whose context has ended answers with the best
// construction, verified, without starting the solver (--time-limit
// and Ctrl-C answer at once).
func TestSearchStoppedAnswersWithTheBestConstruction(t *testing.T) {
	// k-shape: no baseline applies, so a construction must answer.
	p, err := placement.Builtin("k-shape", placement.Options{Devices: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, spec.Spec{Placement: p, MicroBatches: 32, Memory: 8}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Search != nil || res.Skipped == "" {
		t.Errorf("the solver ran after the context ended (skipped: %q)", res.Skipped)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if res.Proven() && res.Gap() > 0 {
		t.Error("a stopped search claims a proof")
	}
}

// Never lose (docs/never-lose.md): on every built-in placement, split and chunked
// variants included, under two budgets and two N, the search's makespan
// is no longer than that of any baseline that applies and fits the budget.
// neverLoseEffort caps every solver step of the search far below the
// defaults and skips the refinement: the claim is about the starts.
var neverLoseEffort = Options{Effort: 20_000, PhaseEffort: 20_000, RefineEffort: -1, LNSSteps: -1}

func TestSearchNeverLosesToABaseline(t *testing.T) {
	testskip.Short(t, "many searches")
	var ps []*placement.Placement
	for _, name := range placement.BuiltinNames() {
		for _, opt := range []placement.Options{{}, {SplitBackward: true}, {Chunks: 2, Order: placement.Loop}, {Chunks: 2, Order: placement.V, SplitBackward: true}} {
			if p, err := placement.Builtin(name, opt); err == nil {
				ps = append(ps, p)
			}
		}
	}
	compared := 0
	for _, p := range ps {
		for _, memory := range []int{p.Devices, 2 * p.Devices} {
			for _, n := range []int{p.Devices, 3 * p.Devices} {
				// The constructions and baselines come first, so the
				// claim holds whatever the solver finds: a small,
				// deterministic effort keeps the test quick on a loaded
				// machine, where a time limit could stop the search
				// before every baseline had been tried.
				res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, neverLoseEffort)
				if err != nil {
					continue // no schedule fits this budget
				}
				for _, m := range baseline.All() {
					s, err := m.Build(spec.Spec{Placement: p, MicroBatches: n, Memory: memory})
					if err != nil {
						continue
					}
					compared++
					if schedule.Makespan(s) < res.Makespan() {
						t.Errorf("%s memory %d N %d: %s ends at %d, the search at %d", p.Name, memory, n, m.Name, schedule.Makespan(s), res.Makespan())
					}
				}
			}
		}
	}
	if compared == 0 {
		t.Error("no baseline applied: the test checks nothing")
	}
}
