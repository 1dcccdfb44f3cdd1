package placement

import (
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"testing"
)

// pairsMatrix is Pairs as it was written first, with a block × block
// ancestor matrix: the reference the linear-memory Pairs must equal.
func pairsMatrix(p *Placement) []int {
	order, _ := p.Topo()
	rank := make([]int, len(p.Blocks))
	for r, i := range order {
		rank[i] = r
	}
	preds := p.Preds()
	anc := make([][]bool, len(p.Blocks))
	for _, i := range order {
		anc[i] = make([]bool, len(p.Blocks))
		for _, j := range preds[i] {
			anc[i][j] = true
			for k, a := range anc[j] {
				anc[i][k] = anc[i][k] || a
			}
		}
	}
	pair := make([]int, len(p.Blocks))
	for i := range pair {
		pair[i] = -1
	}
	usedInput := make([]bool, len(p.Blocks))
	usedWeight := make([]bool, len(p.Blocks))
	free := func(f int, k KindInfo) bool {
		return !(k.InputGradient && usedInput[f]) && !(k.WeightGradient && usedWeight[f])
	}
	for _, b := range order {
		k := kindInfo(p.Blocks[b].Kind)
		if !k.Gradient {
			continue
		}
		best := -1
		if !k.InputGradient {
			for _, j := range preds[b] {
				jk := kindInfo(p.Blocks[j].Kind)
				if jk.InputGradient && !jk.WeightGradient && pair[j] >= 0 && free(pair[j], k) &&
					slices.Equal(p.Blocks[j].Devices, p.Blocks[b].Devices) {
					best = pair[j]
					break
				}
			}
		}
		if best < 0 {
			for f, fb := range p.Blocks {
				if !kindInfo(fb.Kind).Gradient && free(f, k) && anc[b][f] && slices.Equal(fb.Devices, p.Blocks[b].Devices) &&
					(best < 0 || rank[f] > rank[best]) {
					best = f
				}
			}
		}
		if best >= 0 {
			pair[b] = best
			usedInput[best] = usedInput[best] || k.InputGradient
			usedWeight[best] = usedWeight[best] || k.WeightGradient
		}
	}
	return pair
}

// randomDAG is a placement of k blocks of random kinds on random device
// groups of d devices, each dependency from a lower index to a higher one.
func randomDAG(rng *rand.Rand, k, d int) *Placement {
	p := &Placement{Name: "random", Devices: d}
	kinds := Kinds()
	for i := range k {
		devs := []int{rng.Intn(d)}
		if rng.Intn(5) == 0 && d > 1 {
			devs = []int{0, 1}
		}
		p.Blocks = append(p.Blocks, Block{ID: fmt.Sprintf("x%d", i), Kind: kinds[rng.Intn(len(kinds))], Devices: devs, Time: 1})
	}
	for j := 1; j < k; j++ {
		for i := range j {
			if rng.Intn(k) < 2 {
				p.Deps = append(p.Deps, Dep{From: i, To: j})
			}
		}
	}
	// Shuffle the indices so that the topological order is not the
	// index order.
	perm := rng.Perm(k)
	q := &Placement{Name: p.Name, Devices: d, Blocks: make([]Block, k)}
	for i, b := range p.Blocks {
		q.Blocks[perm[i]] = b
	}
	for _, dp := range p.Deps {
		q.Deps = append(q.Deps, Dep{From: perm[dp.From], To: perm[dp.To]})
	}
	return q
}

func TestPairsMatchesMatrix(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := range 500 {
		p := randomDAG(rng, 2+rng.Intn(30), 1+rng.Intn(4))
		if got, want := p.Pairs(), pairsMatrix(p); !slices.Equal(got, want) {
			t.Fatalf("case %d: Pairs %v, the matrix's %v", n, got, want)
		}
	}
	for _, name := range BuiltinNames() {
		for _, opt := range []Options{{Devices: 4}, {Devices: 4, SplitBackward: true}, {Devices: 4, Chunks: 2}, {Devices: 4, Chunks: 2, Order: V, SplitBackward: true}} {
			p, err := Builtin(name, opt)
			if err != nil {
				continue
			}
			if got, want := p.Pairs(), pairsMatrix(p); !slices.Equal(got, want) {
				t.Errorf("%s %+v: Pairs %v, the matrix's %v", name, opt, got, want)
			}
		}
	}
}

// A long chain's pairs take memory linear in its blocks: the matrix took
// K² bytes (400 MB for these 20,000 blocks).
func TestPairsLinearMemory(t *testing.T) {
	const half = 10000
	p := &Placement{Name: "chain", Devices: 8}
	for i := range half {
		p.Blocks = append(p.Blocks, Block{ID: fmt.Sprintf("f%d", i), Kind: Forward, Devices: []int{i * 8 / half}, Time: 1})
	}
	for i := half - 1; i >= 0; i-- {
		p.Blocks = append(p.Blocks, Block{ID: fmt.Sprintf("b%d", i), Kind: Backward, Devices: []int{i * 8 / half}, Time: 1})
	}
	for i := 1; i < 2*half; i++ {
		p.Deps = append(p.Deps, Dep{From: i - 1, To: i})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	pair := p.Pairs()
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("Pairs of %d blocks allocated %d bytes, want under 16 MiB", 2*half, alloc)
	}
	for i := range half {
		if pair[2*half-1-i] != i {
			t.Fatalf("b%d paired with %d, want f%d", i, pair[2*half-1-i], i)
		}
	}
}
