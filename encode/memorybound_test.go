package encode

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Property: the memory bound of rules.LowerBounds never exceeds the
// proven optimum. Random chains on two devices with random times and
// memories, under budgets that leave room for one, two or three
// micro-batches.
func TestMemoryBoundBelowOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	cases := 30
	if testing.Short() {
		cases = 8
	}
	bites := 0
	for c := range cases {
		p := &placement.Placement{Name: fmt.Sprintf("chain%d", c), Devices: 2}
		k := 3 + rng.IntN(4)
		for i := range k {
			m := 1 + rng.IntN(2)
			if i >= k/2 {
				m = -rng.IntN(2)
			}
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("b%d", i), Kind: placement.Forward, Devices: []int{rng.IntN(2)}, Time: 1 + rng.IntN(3), Memory: m})
			if i > 0 {
				p.Deps = append(p.Deps, placement.Dep{From: i - 1, To: i})
			}
		}
		n := 3
		peak := 0
		for _, b := range p.Blocks {
			peak += max(b.Memory, 0)
		}
		memory := peak * (1 + rng.IntN(2))
		s, sol, err := Optimal(t.Context(), p, n, memory, smt.Options{})
		if err != nil {
			continue // infeasible budgets prove nothing here
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: memory}).Makespan
		if sol.Proven && lb > sol.Makespan {
			t.Fatalf("%s memory %d: bound %d above the optimum %d", p.Name, memory, lb, sol.Makespan)
		}
		if lb > rules.LowerBounds(spec.New(p, n)).Makespan {
			bites++
		}
	}
	if bites == 0 && !testing.Short() {
		t.Error("the memory bound never rose above the others: the test checks nothing")
	}
}
