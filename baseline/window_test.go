package baseline

import (
	"cmp"
	"errors"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// TestCarrierBuild: a baseline built on a window and carried to N is the
// schedule Build gives at N, the same instances and decisions (in
// another order: the schedule file sorts both), and verifies; one over the budget on the window is over it
// at N; two baselines with one window schedule share its extension.
func TestCarrierBuild(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}).WithOffload(1).WithRecompute()
	const n, w = 300, 48
	for _, memory := range []int{4, 6} {
		c := &Carrier{W: w}
		sp := spec.Spec{Placement: p, MicroBatches: n, Memory: memory}
		var shared int
		for _, m := range All() {
			got, err := c.Build(m, sp)
			want, werr := m.Build(sp)
			if errors.Is(err, ErrOverBudget) {
				if !errors.Is(werr, ErrOverBudget) {
					t.Errorf("memory %d: %s: over the budget on %d micro-batches, not at %d (%v)", memory, m.Name, w, n, werr)
				}
				continue
			}
			if (err == nil) != (werr == nil) {
				t.Errorf("memory %d: %s: carried: %v; built at N: %v", memory, m.Name, err, werr)
				continue
			}
			if err != nil {
				continue
			}
			if got.MicroBatches != n {
				t.Fatalf("memory %d: %s: %d micro-batches, want %d", memory, m.Name, got.MicroBatches, n)
			}
			if err := verify.Schedule(got); err != nil {
				t.Errorf("memory %d: %s: %v", memory, m.Name, err)
			}
			if !sameSets(got, want) {
				t.Errorf("memory %d: %s: carried from %d micro-batches is not Build's schedule at %d (makespans %d, %d)", memory, m.Name, w, n, schedule.Makespan(got), schedule.Makespan(want))
			}
		}
		for _, x := range c.seen {
			if x.ext != nil {
				shared++
			}
		}
		t.Logf("memory %d: %d extensions", memory, shared)
	}
}

// sameSets reports whether a and b have the same instances and the same
// decisions, in any order.
func sameSets(a, b *schedule.Schedule) bool {
	ia, ib := slices.Clone(a.Instances), slices.Clone(b.Instances)
	da, db := slices.Clone(a.Decisions), slices.Clone(b.Decisions)
	for _, x := range [][]schedule.Instance{ia, ib} {
		slices.SortFunc(x, func(p, q schedule.Instance) int {
			return cmp.Or(cmp.Compare(p.Block, q.Block), cmp.Compare(p.Micro, q.Micro))
		})
	}
	for _, x := range [][]schedule.Decision{da, db} {
		slices.SortFunc(x, func(p, q schedule.Decision) int {
			return cmp.Or(cmp.Compare(p.Block, q.Block), cmp.Compare(p.Micro, q.Micro))
		})
	}
	return slices.Equal(ia, ib) && slices.Equal(da, db)
}
