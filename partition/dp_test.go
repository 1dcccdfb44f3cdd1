package partition

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// randomGraph is a small DAG with random times, sizes and transfer costs:
// edges only from lower to higher index, so it is acyclic.
func randomGraph(r *rand.Rand, n, k, l int) *Graph {
	g := &Graph{Accelerators: k, CPUs: l, Memory: 0}
	for i := range n {
		g.Nodes = append(g.Nodes, Node{
			Acc:  float64(1 + r.IntN(9)),
			CPU:  float64(2 + r.IntN(20)),
			Size: float64(1 + r.IntN(4)),
			Comm: float64(r.IntN(3)) / 2,
			// A few colour classes make colocation bite.
			Class: []int{-1, -1, -1, i % 2}[r.IntN(4)],
		})
	}
	for j := 1; j < n; j++ {
		first := r.IntN(j)
		g.Edges = append(g.Edges, [2]int{first, j}) // connected
		for i := 0; i < j; i++ {
			if i != first && r.IntN(4) == 0 {
				g.Edges = append(g.Edges, [2]int{i, j})
			}
		}
	}
	if r.IntN(2) == 0 {
		g.Memory = float64(4 + r.IntN(8))
	}
	return g
}

// bruteForce tries every assignment of nodes to devices and returns the
// least max load among those keep returns true for (or +Inf).
func bruteForce(t *testing.T, g *Graph, keep func(*Split) bool) float64 {
	t.Helper()
	n, nd := len(g.Nodes), g.Accelerators+g.CPUs
	dev := make([]int, n)
	best := math.Inf(1)
	var rec func(v int)
	rec = func(v int) {
		if v == n {
			s, err := NewSplit(g, dev)
			if err != nil {
				t.Fatal(err)
			}
			if s.Fits() && s.Colocated && keep(s) && s.MaxLoad < best {
				best = s.MaxLoad
			}
			return
		}
		for d := range nd {
			dev[v] = d
			rec(v + 1)
		}
	}
	rec(0)
	return best
}

// acyclicStages reports whether the stages can run as a pipeline: the
// graph of stages (an edge where a node's successor is on another device)
// has no cycle. Contiguous sets alone do not ensure it; the DP's chains
// of ideals do.
func acyclicStages(s *Split) bool {
	g := s.Graph
	nd := g.Accelerators + g.CPUs
	q := &Graph{Accelerators: 1}
	for range nd {
		q.Nodes = append(q.Nodes, Node{Class: -1})
	}
	seen := map[[2]int]bool{}
	for _, e := range g.Edges {
		a, b := s.Device[e[0]], s.Device[e[1]]
		if a != b && !seen[[2]int{a, b}] {
			seen[[2]int{a, b}] = true
			q.Edges = append(q.Edges, [2]int{a, b})
		}
	}
	return q.cycle() == nil
}

// The DP is exact: on small random graphs it finds the least max load of
// all contiguous splits whose stages form a pipeline (§5.1.1), found by
// trying every assignment.
func TestContiguousMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		g := randomGraph(r, 3+r.IntN(4), 1+r.IntN(2), r.IntN(2))
		want := bruteForce(t, g, func(s *Split) bool { return s.Contiguous && acyclicStages(s) })
		res, err := Contiguous(context.Background(), g, DPOptions{})
		if math.IsInf(want, 1) {
			if err == nil {
				t.Errorf("trial %d: DP found %.3f where no split fits", trial, res.Split.MaxLoad)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if math.Abs(res.Split.MaxLoad-want) > 1e-9 {
			t.Errorf("trial %d: DP %.4f, brute force %.4f (graph %+v)", trial, res.Split.MaxLoad, want, g)
		}
		if s := res.Split; !s.Contiguous || !s.Fits() || !s.Colocated || !acyclicStages(s) {
			t.Errorf("trial %d: DP split contiguous %v fits %v colocated %v", trial, s.Contiguous, s.Fits(), s.Colocated)
		}
	}
}

// The integer program is exact too: it finds the least max load over all
// splits that keep colour classes together and fit (Fig. 6 without
// contiguity), up to its time grid.
func TestNonContiguousMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 25 {
		g := randomGraph(r, 3+r.IntN(3), 1+r.IntN(2), r.IntN(2))
		want := bruteForce(t, g, func(*Split) bool { return true })
		dp, err := Contiguous(context.Background(), g, DPOptions{})
		if err != nil {
			continue // nothing fits contiguously: no start
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := NonContiguous(ctx, g, IPOptions{Start: dp.Split})
		cancel()
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !res.Proven {
			t.Errorf("trial %d: not proven on a tiny graph", trial)
		}
		if math.Abs(res.Split.MaxLoad-want) > 1e-6 {
			t.Errorf("trial %d: IP %.4f, brute force %.4f", trial, res.Split.MaxLoad, want)
		}
		if res.Split.MaxLoad > dp.Split.MaxLoad+1e-12 {
			t.Errorf("trial %d: IP %.4f worse than its start %.4f", trial, res.Split.MaxLoad, dp.Split.MaxLoad)
		}
	}
}

// The same graph gives the same split, node for node, whatever the
// number of workers.
func TestContiguousDeterministic(t *testing.T) {
	g := loadPaper(t, "operator/bert_l-3_training.json")
	a, err := Contiguous(context.Background(), g, DPOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Contiguous(context.Background(), g, DPOptions{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if a.Pairs != b.Pairs || a.Visited != b.Visited {
		t.Errorf("pairs %d and %d, visited %d and %d", a.Pairs, b.Pairs, a.Visited, b.Visited)
	}
	for v := range a.Split.Device {
		if a.Split.Device[v] != b.Split.Device[v] {
			t.Fatalf("node %d on device %d, then %d", v, a.Split.Device[v], b.Split.Device[v])
		}
	}
}

// A cancelled context stops the DP with the context's error.
func TestContiguousCancelled(t *testing.T) {
	g := loadPaper(t, "operator/bert_l-3_training.json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Contiguous(ctx, g, DPOptions{}); err == nil {
		t.Fatal("no error from a cancelled context")
	}
}

// Interleaved chunks: exactly C·D non-empty stages, and the cuts moved so
// that the largest device sum is least. On the GPT-like profile (4
// devices, 2 chunks) the embedding's device must hold one more stage of at
// least one block: 10.2 + 3 = 13.2 is the best possible, in loop and in V
// order.
func TestInterleavedChunks(t *testing.T) {
	g := loadModel(t, "gpt-like.json")
	for _, order := range []string{"loop", "v"} {
		devs := []int{0, 1, 2, 3, 0, 1, 2, 3}
		if order == "v" {
			devs = []int{0, 1, 2, 3, 3, 2, 1, 0}
		}
		r, err := Contiguous(context.Background(), g, DPOptions{Stages: 8, StageDevices: devs, DeviceMemory: g.Memory})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Split.Stages) != 8 {
			t.Fatalf("%s: %d stages, want 8", order, len(r.Split.Stages))
		}
		sum := make([]float64, 4)
		mem := make([]float64, 4)
		for i, st := range r.Split.Stages {
			sum[devs[i]] += st.Load
			mem[devs[i]] += st.Memory
		}
		worst := 0.0
		for d := range sum {
			worst = math.Max(worst, sum[d])
			if mem[d] > g.Memory {
				t.Errorf("%s: device %d memory %v over the cap %v", order, d, mem[d], g.Memory)
			}
		}
		if math.Abs(worst-13.2) > 1e-9 {
			t.Errorf("%s: largest device load %.4f, want 13.2 (loads %v)", order, worst, sum)
		}
	}
}

// naiveDP is the DP as §5.1.1 states it, with none of Contiguous's
// shortcuts: every pair of nested ideals is tried, ties to the smaller
// sub-ideal and then to the accelerator. merge applies the published
// preprocessing's merge of idle units (as Contiguous does). It returns
// the least max load and the device of every node.
func naiveDP(t testing.TB, g *Graph, merge bool) (float64, []int) {
	t.Helper()
	u, err := contract(g)
	if err != nil {
		t.Fatal(err)
	}
	if merge {
		u = u.mergeIdle()
	}
	lat, err := u.ideals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ideals := lat.sets
	tb := newTables(g, u, ideals)
	K, L, M := g.Accelerators, g.CPUs, g.Memory
	nI, cells, inf := len(ideals), (K+1)*(L+1), math.Inf(1)
	dp := make([]float64, nI*cells)
	from := make([]int, nI*cells)
	cpu := make([]bool, nI*cells)
	for i := range dp {
		dp[i] = inf
	}
	dp[0] = 0
	for i := 1; i < nI; i++ {
		for j := 0; j < i; j++ {
			if tb.size[j] >= tb.size[i] || !subset(ideals[j], ideals[i]) {
				continue
			}
			if !u.mirror && !u.backwardContiguous(ideals[i], ideals[j]) {
				continue
			}
			a, p := tb.acc(i, j, M), tb.pc[i]-tb.pc[j]
			for k := 0; k <= K; k++ {
				for l := 0; l <= L; l++ {
					c := k*(L+1) + l
					if k > 0 && a < inf {
						if v := math.Max(dp[j*cells+c-(L+1)], a); v < dp[i*cells+c] {
							dp[i*cells+c], from[i*cells+c], cpu[i*cells+c] = v, j, false
						}
					}
					if l > 0 {
						if v := math.Max(dp[j*cells+c-1], p); v < dp[i*cells+c] {
							dp[i*cells+c], from[i*cells+c], cpu[i*cells+c] = v, j, true
						}
					}
				}
			}
		}
	}
	best, bc := inf, -1
	for c := range cells {
		if dp[(nI-1)*cells+c] < best {
			best, bc = dp[(nI-1)*cells+c], c
		}
	}
	if bc < 0 {
		return inf, nil
	}
	unitDev := make([]int, u.n)
	na, nc := 0, 0
	var chain [][2]int
	for i, c := nI-1, bc; i != 0; {
		j := from[i*cells+c]
		chain = append(chain, [2]int{j, i})
		if cpu[i*cells+c] {
			chain[len(chain)-1][0] = -1 - j
			c--
		} else {
			c -= L + 1
		}
		i = j
	}
	for p := len(chain) - 1; p >= 0; p-- {
		j, i, d := chain[p][0], chain[p][1], 0
		if j < 0 {
			j, d = -1-j, K+nc
			nc++
		} else {
			d = na
			na++
		}
		for x := range u.n {
			if has(ideals[i], x) && !has(ideals[j], x) {
				unitDev[x] = d
			}
		}
	}
	dev := make([]int, len(g.Nodes))
	for v := range dev {
		dev[v] = unitDev[u.of[v]]
	}
	return best, dev
}

// Contiguous's shortcuts (the walk down the lattice, the bound from a
// chain split, the cells no split within it can use) change nothing: the
// same max load and the same split, node for node, as the plain DP, on
// random graphs (with idle nodes, colour classes and backward nodes) and
// on every shipped graph of Tarnawski et al.
func TestContiguousMatchesNaiveDP(t *testing.T) {
	var cases []*Graph
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		g := randomGraph(r, 4+r.IntN(9), 1+r.IntN(3), r.IntN(2))
		for v := range g.Nodes {
			switch r.IntN(8) {
			case 0, 1: // idle nodes for mergeIdle
				g.Nodes[v].Acc, g.Nodes[v].CPU = 0, 0
			case 2:
				g.Nodes[v].Backward = true
			case 3:
				g.Nodes[v].Acc = math.Inf(1) // CPU only
			case 4:
				g.Nodes[v].CPU = 0
			}
		}
		if g.Validate() == nil {
			cases = append(cases, g)
		}
	}
	for _, f := range []string{
		"layer/bert24_inference.json", "layer/bert24_training.json",
		"layer/resnet50_inference.json", "layer/resnet50_training.json",
		"operator/bert_l-3_inference.json", "operator/resnet50_inference.json",
		"operator/resnet50_training.json",
	} {
		cases = append(cases, loadPaper(t, f))
	}
	for n, g := range cases {
		want, dev := naiveDP(t, g, true)
		res, err := Contiguous(context.Background(), g, DPOptions{})
		if math.IsInf(want, 1) {
			if err == nil {
				t.Errorf("case %d: Contiguous found %v where the plain DP found none", n, res.Split.MaxLoad)
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d: %v", n, err)
		}
		s, err := NewSplit(g, dev)
		if err != nil {
			t.Fatal(err)
		}
		if res.Split.MaxLoad != s.MaxLoad {
			t.Errorf("case %d: max load %v, plain DP %v", n, res.Split.MaxLoad, s.MaxLoad)
		}
		for v := range dev {
			if res.Split.Device[v] != dev[v] {
				t.Errorf("case %d: node %d on device %d, plain DP %d", n, v, res.Split.Device[v], dev[v])
				break
			}
		}
	}
}

// Merging idle units (the published DP's last preprocessing step) keeps
// the optimum where memory does not bind: on small random graphs with
// zero-time nodes, the DP with the merge finds the least max load of all
// contiguous splits whose stages form a pipeline, found by trying every
// assignment.
func TestMergeIdleKeepsOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	merged := 0
	for trial := range 60 {
		g := randomGraph(r, 3+r.IntN(4), 1+r.IntN(2), r.IntN(2))
		g.Memory = 0
		for v := range g.Nodes {
			if r.IntN(3) == 0 {
				g.Nodes[v].Acc, g.Nodes[v].CPU = 0, 0
			}
		}
		u, err := contract(g)
		if err != nil {
			t.Fatal(err)
		}
		if u.mergeIdle().n < u.n {
			merged++
		}
		want := bruteForce(t, g, func(s *Split) bool { return s.Contiguous && acyclicStages(s) })
		res, err := Contiguous(context.Background(), g, DPOptions{})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if math.Abs(res.Split.MaxLoad-want) > 1e-9 {
			t.Errorf("trial %d: DP %.4f, brute force %.4f", trial, res.Split.MaxLoad, want)
		}
	}
	if merged < 10 {
		t.Errorf("only %d of 60 graphs had a unit to merge", merged)
	}
}

// The walk down the lattice visits every ideal under I exactly once, and
// the units are numbered in a topological order (the walk's canonical
// order relies on it), before and after the merge of idle units.
func TestWalkVisitsEverySubIdealOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := range 60 {
		g := randomGraph(r, 4+r.IntN(9), 1, 0)
		for v := range g.Nodes {
			if r.IntN(4) == 0 {
				g.Nodes[v].Acc, g.Nodes[v].CPU = 0, 0
			}
			if r.IntN(5) == 0 {
				g.Nodes[v].Backward = true
			}
		}
		if g.Validate() != nil {
			continue
		}
		u, err := contract(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []*units{u, u.mergeIdle()} {
			for a := range u.n {
				for _, b := range u.succ[a] {
					if b <= a {
						t.Fatalf("trial %d: unit edge %d -> %d against the numbering", trial, a, b)
					}
				}
			}
			lat, err := u.ideals(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			w := &walker{u: u, lat: lat, need: make([]int32, u.n), bufs: make([][]int32, u.n+2)}
			for i := range lat.sets {
				seen := map[int]int{}
				w.visit = func(j int) bool { seen[j]++; return true }
				w.walk(i)
				want := 0
				for j := range lat.sets {
					if j != i && subset(lat.sets[j], lat.sets[i]) {
						want++
						if seen[j] != 1 {
							t.Errorf("trial %d: ideal %d under %d visited %d times", trial, j, i, seen[j])
						}
					}
				}
				if len(seen) != want {
					t.Errorf("trial %d: %d ideals visited under %d, want %d", trial, len(seen), i, want)
				}
			}
		}
	}
}
