package repetend

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
)

// Property: the period bound under memory of rules.LowerBounds never
// exceeds the least period the solver proves among repetends with
// N_R ≤ MaxNR (which is at least the least period of any repetend).
// Random V chains on two or three devices, some blocks on all of them
// (barriers, as the blocks sharded over all devices of the Tessel paper's
// m- and nn-shapes, Lin et al. §VI-A), random times, memory +1 on the
// way down and −1 on the way back, under budgets of one or two
// micro-batches.
func TestMemoryPeriodBelowProvenPeriod(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	cases := 40
	if testing.Short() {
		cases = 10
	}
	bites, proven := 0, 0
	for c := range cases {
		// A V chain (stage s down on device s, its backward back up),
		// barriers between random stages.
		devs := 2 + rng.IntN(2)
		p := &placement.Placement{Name: fmt.Sprintf("chain%d", c), Devices: devs}
		add := func(id string, on []int, m int) {
			p.Blocks = append(p.Blocks, placement.Block{ID: id, Kind: placement.Forward, Devices: on, Time: 1 + rng.IntN(3), Memory: m})
			if k := len(p.Blocks); k > 1 {
				p.Deps = append(p.Deps, placement.Dep{From: k - 2, To: k - 1})
			}
		}
		all := make([]int, devs)
		for d := range all {
			all[d] = d
		}
		for s := 0; s < 2*devs; s++ {
			if rng.IntN(3) == 0 {
				add(fmt.Sprintf("x%d", s), all, 0)
			}
			if s < devs {
				add(fmt.Sprintf("f%d", s), []int{s}, 1)
			} else {
				add(fmt.Sprintf("b%d", 2*devs-1-s), []int{2*devs - 1 - s}, -1)
			}
		}
		memory := 1 + rng.IntN(2)
		bound := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 0, Memory: memory}).Period
		res, err := Search(context.Background(), spec.Spec{Placement: p, Memory: memory}, Options{MaxNR: 4, Effort: 2_000_000, Jobs: 1})
		if err != nil || res.Best == nil || !res.Proven {
			continue
		}
		proven++
		if bound > res.Best.Period {
			t.Fatalf("%s memory %d: bound %d above the proven period %d\n%+v", p.Name, memory, bound, res.Best.Period, p.Blocks)
		}
		if bound > p.MaxLoad() {
			bites++
		}
	}
	t.Logf("%d of %d cases proven; the memory raised the period bound on %d", proven, cases, bites)
	if bites == 0 && !testing.Short() {
		t.Error("the memory never raised the period bound: the test checks nothing")
	}
}

// The budget keeps fewer micro-batches in flight than the load bound
// assumes: m-shape and nn-shape on 8 to 32 devices under memory D. The
// search reaches these periods on 8 devices (m-shape 8, 25% repetend
// bubbles; nn-shape 10, 20%), which they now prove.
func TestMemoryPeriodBuiltins(t *testing.T) {
	for _, c := range []struct {
		name            string
		devices, period int
	}{
		{"m-shape", 8, 8}, {"m-shape", 16, 8}, {"m-shape", 32, 8},
		{"nn-shape", 8, 10}, {"nn-shape", 16, 10}, {"nn-shape", 32, 10},
		{"nn-shape", 4, 8}, {"v-shape", 8, 4},
	} {
		p, err := placement.Builtin(c.name, placement.Options{Devices: c.devices})
		if err != nil {
			t.Fatal(err)
		}
		if got := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: 128, Memory: c.devices}).Period; got != c.period {
			t.Errorf("%s, %d devices, memory %d: period bound %d, want %d", c.name, c.devices, c.devices, got, c.period)
		}
	}
}
