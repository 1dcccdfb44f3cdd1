package hetero

import (
	"context"
	"math"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/partition"
)

func load(t *testing.T, model, clusterFile string) (*partition.Graph, *cluster.Cluster) {
	t.Helper()
	g, err := partition.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Load(clusterFile)
	if err != nil {
		t.Fatal(err)
	}
	return g, c
}

// bruteForce is the least max load over every device order and every way
// of cutting n layers into len(devices) non-empty stages.
func bruteForce(k *Cost) float64 {
	n, D := len(k.Model.Layers), len(k.Cluster.Devices)
	best := math.Inf(1)
	var perms [][]int
	var permute func(p []int, used []bool)
	permute = func(p []int, used []bool) {
		if len(p) == D {
			perms = append(perms, append([]int(nil), p...))
			return
		}
		for d := range D {
			if !used[d] {
				used[d] = true
				permute(append(p, d), used)
				used[d] = false
			}
		}
	}
	permute(nil, make([]bool, D))
	var cut func(cuts []int)
	cut = func(cuts []int) {
		if len(cuts) == D {
			cs := append(append([]int(nil), cuts...), n)
			for _, p := range perms {
				if s := k.Evaluate("brute", cs, p); s.Fits {
					best = min(best, s.MaxLoad)
				}
			}
			return
		}
		last := cuts[len(cuts)-1]
		for c := last + 1; c <= n-(D-len(cuts)); c++ {
			cut(append(cuts, c))
		}
	}
	cut([]int{0})
	return best
}

// Wu et al. §4.1 (heterogeneous GPUs): on a chain over 4 devices, one of
// them 2× slower and links that differ, the dynamic program's split and
// device order reach the brute-force optimum, strictly below the
// speed-oblivious splits evaluated on the same cluster.
func TestBestIsBruteForceOptimum(t *testing.T) {
	for _, tc := range []struct{ model, cluster string }{
		{"../testdata/hetero/chain-12.json", "../testdata/hetero/four-one-slow.json"},
		{"../testdata/hetero/chain-12.json", "../testdata/hetero/four-one-slow-uniform.json"},
		{"../testdata/hetero/roofline-8.json", "../testdata/hetero/four-two-types.json"},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			g, c := load(t, tc.model, tc.cluster)
			r, err := Run(context.Background(), g, c, Options{TimeUnit: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(r.Cost)
			if !r.Exact || math.Abs(r.Split.MaxLoad-want) > 1e-9*want {
				t.Fatalf("max load %v (exact %v), brute force %v", r.Split.MaxLoad, r.Exact, want)
			}
			if !(r.Split.MaxLoad < r.Even.MaxLoad) || !(r.Split.MaxLoad < r.Oblivious.MaxLoad) {
				t.Errorf("max load %v, not below even %v and oblivious %v", r.Split.MaxLoad, r.Even.MaxLoad, r.Oblivious.MaxLoad)
			}
		})
	}
}
