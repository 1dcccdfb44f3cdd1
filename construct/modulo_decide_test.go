package construct

import (
	"context"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// vOffload is the memory experiment's setting (docs/memory-experiment.md):
// the V placement, 2 chunks per device, backward split, each move 2.
func vOffload(t testing.TB, devices int) *placement.Placement {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: devices, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	return p.WithOffload(2)
}

// TestModuloDecide: on 4 devices, budgets where keeping every activation
// needs a longer period, the modulo schedule with decisions fits, offloads,
// and its unrolled schedule verifies under the budget.
func TestModuloDecide(t *testing.T) {
	p := vOffload(t, 4)
	for _, tc := range []struct{ memory, unroll, n int }{
		{2, 1, 8}, {3, 1, 8}, {3, 2, 9}, {3, 2, 16},
	} {
		dp, err := ModuloDecide(context.Background(), p, DecideOptions{Memory: tc.memory, Unroll: tc.unroll})
		if err != nil {
			t.Fatalf("memory %d u=%d: %v", tc.memory, tc.unroll, err)
		}
		if dp.Unroll != tc.unroll || len(dp.Starts) != tc.unroll*len(p.Blocks) {
			t.Fatalf("memory %d u=%d: got u=%d with %d starts", tc.memory, tc.unroll, dp.Unroll, len(dp.Starts))
		}
		s, err := dp.Schedule(spec.Spec{Placement: p, MicroBatches: tc.n, Memory: tc.memory})
		if err != nil {
			t.Fatalf("memory %d u=%d: %v", tc.memory, tc.unroll, err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("memory %d u=%d: %v", tc.memory, tc.unroll, err)
		}
		off, _ := s.Count()
		kept, err := Modulo(context.Background(), p, ModuloOptions{Memory: tc.memory, MicroBatches: tc.n})
		t.Logf("memory %d u=%d: period %d (keeping: %v), %d offloaded, makespan %d", tc.memory, tc.unroll, dp.Period, kept != nil && err == nil, off, schedule.Makespan(s))
		if err == nil && dp.Period > kept.Period*tc.unroll {
			t.Errorf("memory %d u=%d: period %d, keeping every activation has %d per micro-batch", tc.memory, tc.unroll, dp.Period, kept.Period)
		}
		if off == 0 {
			t.Errorf("memory %d u=%d: nothing offloaded", tc.memory, tc.unroll)
		}
	}
}

// TestModuloDecideUnlimited: without a budget nothing is offloaded and the
// period is the device load bound.
func TestModuloDecideUnlimited(t *testing.T) {
	p := vOffload(t, 4)
	dp, err := ModuloDecide(context.Background(), p, DecideOptions{Unroll: 2})
	if err != nil {
		t.Fatal(err)
	}
	if dp.Period != 12 {
		t.Errorf("period %d, want 12 (2 micro-batches of 6 per device)", dp.Period)
	}
	for x, o := range dp.Offload {
		if o >= 0 {
			t.Errorf("operation %d offloaded without a budget", x)
		}
	}
}

// TestModuloDecideRejects: placements it does not handle give an error,
// not a panic.
func TestModuloDecideRejects(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ModuloDecide(context.Background(), p, DecideOptions{Memory: 2, Unroll: 1}); err == nil {
		t.Error("no error for a placement without offload")
	}
}

func TestPermutationsSubsets(t *testing.T) {
	for n, want := range []int{1, 1, 2, 6, 24} {
		ps := permutations(n)
		if len(ps) != want || !slices.Equal(ps[0], identity(n)) {
			t.Errorf("permutations(%d): %d, first %v", n, len(ps), ps[0])
		}
	}
	s := subsets(3)
	if len(s) != 8 || s[0] != 0 || s[7] != 7 {
		t.Errorf("subsets(3) = %v", s)
	}
	if s := subsets(decideExhaustive + 2); len(s) != decideExhaustive+3 {
		t.Errorf("subsets(%d): %d sets", decideExhaustive+2, len(s))
	}
}

// TestDecideGain pins the gain over PipeOffload (Wan et al., "PipeOffload:
// Improving Scalability of Pipeline Parallelism with Memory
// Optimization", §3) with offload alone at a tight budget: 8 devices,
// memory 4, 16 micro-batches, makespan ≤ 0.8 × PipeOffload's, verified.
func TestDecideGain(t *testing.T) {
	p := vOffload(t, 8)
	const n, memory = 16, 4
	ref, err := baseline.PipeOffload(spec.Spec{Placement: p, MicroBatches: n, Memory: memory})
	if err != nil {
		t.Fatal(err)
	}
	limit := schedule.Makespan(ref) * 8 / 10
	best := 0
	for _, c := range decideFollow(context.Background(), p, n, memory, policies(spec.Decisions{Offload: true})) {
		if err := verify.Schedule(c.Schedule); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if best == 0 || c.Makespan < best {
			best = c.Makespan
		}
	}
	t.Logf("best %d, PipeOffload %d", best, schedule.Makespan(ref))
	if best == 0 || best > limit {
		t.Errorf("best makespan %d, want ≤ %d (0.8 × PipeOffload's %d)", best, limit, schedule.Makespan(ref))
	}
}

func BenchmarkDecideFollow(b *testing.B) {
	p := vOffload(b, 8)
	pols := policies(spec.Decisions{Offload: true})
	for b.Loop() {
		decideFollow(context.Background(), p, 64, 4, pols)
	}
}

// TestDecideMemo: a device's remembered choice is the one it would take
// afresh (a device's choice shifts with its operations' times).
func TestDecideMemo(t *testing.T) {
	p := vOffload(t, 4)
	st := newDecideState(p, 2)
	const P, memory = 14, 3
	for r := range 100 {
		starts := st.place(P, r)
		if starts == nil {
			continue
		}
		for range 2 { // the second time from the memo
			a, _, okA := st.decideWith(P, starts, memory, false)
			st.ownSwitches = false
			b, _, okB := st.decideWith(P, starts, memory, false)
			st.ownSwitches = true
			if okA != okB || a.excess != b.excess || !slices.Equal(a.Offload, b.Offload) || !slices.Equal(a.Reload, b.Reload) {
				t.Fatalf("restart %d: with the memo %v %v (excess %d), afresh %v %v (excess %d)", r, a.Offload, a.Reload, a.excess, b.Offload, b.Reload, b.excess)
			}
		}
	}
}
