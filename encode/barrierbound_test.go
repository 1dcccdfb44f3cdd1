package encode

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// Property: the bound of rules.LowerBounds with the blocks on all
// devices cut out (the barriers of the Tessel paper's m- and nn-shapes,
// Lin et al. §VI-A) never exceeds the proven optimum. Random chains on two
// or three devices, some blocks on all of them, random times, with and
// without transfers, three micro-batches.
func TestScheduleBarrierBoundBelowOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	cases := 60
	if testing.Short() {
		cases = 6
	}
	bites := 0
	for c := range cases {
		devs := 2 + rng.IntN(2)
		p := &placement.Placement{Name: fmt.Sprintf("barriers%d", c), Devices: devs}
		k := 4 + rng.IntN(3)
		for i := range k {
			on := []int{rng.IntN(devs)}
			if rng.IntN(3) == 0 {
				on = nil
				for d := range devs {
					on = append(on, d)
				}
			}
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("b%d", i), Kind: placement.Forward, Devices: on, Time: 1 + rng.IntN(3)})
			if i > 0 {
				p.Deps = append(p.Deps, placement.Dep{From: i - 1, To: i})
			}
		}
		if c%2 == 1 {
			p.Transfers = map[placement.Dep]int{}
			for _, d := range p.Deps {
				p.Transfers[d] = rng.IntN(3)
			}
		}
		n := 3
		_, sol, err := Optimal(t.Context(), p, n, 0, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lb := rules.LowerBounds(spec.New(p, n)).Makespan
		if sol.Proven && lb > sol.Makespan {
			t.Fatalf("%s %+v: bound %d above the optimum %d", p.Name, p.Blocks, lb, sol.Makespan)
		}
		if sol.Proven && lb == sol.Makespan {
			bites++
		}
	}
	if bites == 0 && !testing.Short() {
		t.Error("the bound never met the optimum: the test checks little")
	}
}

// The bound proves nn-shape's time-optimal schedule of 6 micro-batches on
// 4 devices under memory 6 (the Tessel paper's §III-B search): 60.
func TestScheduleBarrierBoundNNShape(t *testing.T) {
	p, err := placement.Builtin("nn-shape", placement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 6, Memory: 6}).Makespan; lb != 60 {
		t.Errorf("nn-shape, 6 micro-batches: lower bound %d, want 60", lb)
	}
}
