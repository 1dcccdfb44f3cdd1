package repetend

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// openPlacement is a random layered DAG of k forward blocks on d devices,
// every block but the first free to run on any one device (the first may
// also take all devices when wide), on a cluster whose links take
// transfer; with backward, every forward block has a backward block that
// runs the dependencies in reverse and frees its memory.
func openPlacement(t *testing.T, seed int64, k, d, transfer int, backward, wide bool) *placement.Placement {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	p := &placement.Placement{Name: fmt.Sprintf("open-%d", seed), Devices: d}
	var groups [][]int
	all := []int{}
	for x := range d {
		groups = append(groups, []int{x})
		all = append(all, x)
	}
	for i := range k {
		g := groups
		if wide && i == 0 {
			g = append(slices.Clone(groups), all)
		}
		p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("o%d", i), Kind: placement.Forward, Candidates: g, Time: 1 + r.Intn(4), Memory: 1 + r.Intn(2)})
		for _, j := range r.Perm(i)[:min(i, r.Intn(3))] {
			p.Deps = append(p.Deps, placement.Dep{From: j, To: i})
		}
	}
	if backward {
		fwd := len(p.Deps)
		for i := range k {
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("g%d", i), Kind: placement.Backward, Candidates: groups, Time: 1 + r.Intn(4), Memory: -p.Blocks[i].Memory})
			p.Deps = append(p.Deps, placement.Dep{From: i, To: k + i})
		}
		for _, dep := range p.Deps[:fwd] {
			p.Deps = append(p.Deps, placement.Dep{From: k + dep.To, To: k + dep.From})
		}
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	c := cluster.Uniform(d)
	c.Default.Latency = float64(transfer)
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestSearchAssignedBruteForce pins the repetend with assignment literals
// (She et al., "Automatic Operator-level Parallelism Planning for
// Distributed Deep Learning – A Mixed-Integer Programming Approach", §III
// eqs 6–10) against brute force: its period is the least, over every
// assignment, of the repetend search of that assignment as a pinned
// placement, and its repetend is one of the chosen placement (its period
// is that placement's least).
func TestSearchAssignedBruteForce(t *testing.T) {
	cases := []struct {
		seed              int64
		k, d, transfer    int
		backward, wide    bool
		memory, micro, nr int
	}{
		{seed: 1, k: 4, d: 2, transfer: 1, nr: 3},
		{seed: 2, k: 5, d: 2, transfer: 2, nr: 3},
		{seed: 3, k: 3, d: 3, transfer: 1, nr: 2, wide: true},
		{seed: 4, k: 3, d: 2, transfer: 1, backward: true, nr: 3},
		{seed: 5, k: 3, d: 2, transfer: 2, backward: true, memory: 3, micro: 4, nr: 3},
		{seed: 6, k: 4, d: 2, transfer: 0, nr: 2, memory: 9, micro: 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.seed), func(t *testing.T) {
			ctx := context.Background()
			p := openPlacement(t, tc.seed, tc.k, tc.d, tc.transfer, tc.backward, tc.wide)
			best := 0
			var periods = map[string]int{}
			choice := make([]int, p.K())
			for {
				q, err := placement.Choose(p, choice)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Search(ctx, spec.Spec{Placement: q, Memory: tc.memory, MicroBatches: tc.micro}, Options{MaxNR: tc.nr, Strategy: StrategyJoint, Effort: -1})
				if err != nil {
					t.Fatal(err)
				}
				if r.Best != nil && r.Proven {
					periods[fmt.Sprint(choice)] = r.Best.Period
					if best == 0 || r.Best.Period < best {
						best = r.Best.Period
					}
				} else if r.Best != nil || !r.Proven {
					t.Fatalf("choice %v: reference not proven", choice)
				}
				i := 0
				for ; i < p.K(); i++ {
					if choice[i]++; choice[i] < len(p.DeviceOptions(i)) {
						break
					}
					choice[i] = 0
				}
				if i == p.K() {
					break
				}
			}
			got, err := SearchAssigned(ctx, spec.Spec{Placement: p, Memory: tc.memory, MicroBatches: tc.micro}, AssignedOptions{MaxNR: tc.nr, Effort: -1})
			if err != nil {
				t.Fatal(err)
			}
			if best == 0 {
				if got.Repetend != nil || !got.Proven {
					t.Fatalf("no assignment has a repetend, SearchAssigned: %+v", got)
				}
				return
			}
			if got.Repetend == nil || !got.Proven {
				t.Fatalf("SearchAssigned: %+v, want period %d proven", got, best)
			}
			if got.Repetend.Period != best {
				t.Fatalf("period %d, brute force %d", got.Repetend.Period, best)
			}
			if want, ok := periods[fmt.Sprint(got.Choice)]; !ok || want != best {
				t.Fatalf("choice %v: its own least period %d (ok %v), want %d", got.Choice, want, ok, best)
			}
			t.Logf("period %d, choice %v, %d assignments", best, got.Choice, len(periods))
			// Nothing below the least period, when asked to beat it.
			below, err := SearchAssigned(ctx, spec.Spec{Placement: p, Memory: tc.memory, MicroBatches: tc.micro}, AssignedOptions{MaxNR: tc.nr, Effort: -1, Upper: best})
			if err != nil {
				t.Fatal(err)
			}
			if below.Repetend != nil || !below.Proven || below.LowerBound != best {
				t.Fatalf("Upper %d: %+v", best, below)
			}
		})
	}
}
