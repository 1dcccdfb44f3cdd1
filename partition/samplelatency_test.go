package partition

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
)

// paperSetting loads a shipped inference graph at Tarnawski et al.'s §7
// memory-bound setting.
func paperSetting(t testing.TB, rel string, commScale float64) *Graph {
	t.Helper()
	g := loadPaper(t, rel)
	s, err := PaperSampleLatencySetting(g)
	if err != nil {
		t.Fatal(err)
	}
	g.Accelerators, g.Memory, g.CPUs = s.Accelerators, s.Memory, s.CPUs
	g.ScaleComm(commScale)
	return g
}

// Reference: Tarnawski et al., §7 ("600 MB (for smaller DNNs, of size at
// most 3.6 GB) or 2 GB (for larger DNNs, of size at least 9 GB), and a
// number of accelerators such that the total accelerator memory is
// 1.4–1.8 times the size of the DNN", 8 CPU cores). The published latency
// inputs (github.com/msr-fiddle/dnn-partitioning, latency-inputs) carry
// these headers; the graphs are the shipped ones.
func TestPaperSampleLatencySetting(t *testing.T) {
	for _, c := range []struct {
		file string
		k    int
		mem  float64
	}{
		{"layer/bert24_inference.json", 5, 629145600},
		{"layer/resnet50_inference.json", 14, 2147483648},
		{"operator/bert_l-3_inference.json", 4, 629145600},
		{"operator/resnet50_inference.json", 9, 629145600},
		{"latency/gnmt_inference.json", 6, 629145600},
	} {
		g := loadPaper(t, c.file)
		s, err := PaperSampleLatencySetting(g)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if s.Accelerators != c.k || s.Memory != c.mem || s.CPUs != 8 {
			t.Errorf("%s: %d accelerators of %g, %d CPUs; published %d of %g, 8", c.file, s.Accelerators, s.Memory, s.CPUs, c.k, c.mem)
		}
		if r := float64(s.Accelerators) * s.Memory / s.ModelBytes; r < 1.4 || r > 1.8 {
			t.Errorf("%s: accelerators hold %.2f× the model, §7 says 1.4–1.8", c.file, r)
		}
	}
	// The published GNMT latency input is at the setting already.
	g := loadPaper(t, "latency/gnmt_inference.json")
	if g.Accelerators != 6 || g.Memory != 629145600 || g.CPUs != 8 {
		t.Errorf("gnmt latency input: %d, %g, %d", g.Accelerators, g.Memory, g.CPUs)
	}
	g.Nodes = []Node{{Size: 5e9}}
	if _, err := PaperSampleLatencySetting(g); err == nil {
		t.Error("a 5 GB model: want an error (between the paper's two sizes)")
	}
	// UsePaperSampleLatencySetting puts the setting on the graph.
	h := loadPaper(t, "layer/bert24_inference.json")
	if err := h.UsePaperSampleLatencySetting(); err != nil || h.Accelerators != 5 || h.Memory != 629145600 || h.CPUs != 8 {
		t.Errorf("bert24 with the setting: %d, %g, %d (%v); want 5, 629145600, 8", h.Accelerators, h.Memory, h.CPUs, err)
	}
	h.IDs = nil
	if err := h.UsePaperSampleLatencySetting(); err == nil {
		t.Error("a layer profile: want an error")
	}
}

// The requirement of the latency objective, and Tarnawski et al.'s Table 4,
// BERT-24 layer graph: greedy 100.22, max-load DP 108.03, IP 100.22 (gap
// < 1%). The published graph's transfer costs are a thousandth of what
// those figures imply (docs/partition.md); at both scales the IP's latency
// is at most the greedy fill's and the max-load DP's, with its gap.
func TestSampleLatencyBERT24(t *testing.T) {
	for _, c := range []struct {
		scale               float64
		greedy, dp, ip, gap string
	}{
		{1000, "100.22", "108.03", "100.22", "0.0000"},
		{1, "92.41", "92.42", "92.41", "0.0000"},
	} {
		g := paperSetting(t, "layer/bert24_inference.json", c.scale)
		r, err := RunSampleLatency(context.Background(), g, SampleLatencyOptions{TimeLimit: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, b := range r.Baselines {
			got[b.Method] = b.Latency
			if !b.Fits || !b.Contiguous {
				t.Errorf("scale %g: %s fits %v contiguous %v", c.scale, b.Method, b.Fits, b.Contiguous)
			}
		}
		for m, want := range map[string]string{"greedy": c.greedy, "max-load dp": c.dp, "ip": c.ip} {
			if s := fmt.Sprintf("%.2f", got[m]); s != want {
				t.Errorf("scale %g: %s latency %s, want %s", c.scale, m, s, want)
			}
		}
		if r.Latency > got["greedy"] || r.Latency > got["max-load dp"] {
			t.Errorf("scale %g: IP %.4f above a baseline %v", c.scale, r.Latency, got)
		}
		if s := fmt.Sprintf("%.4f", r.Gap); s != c.gap || r.LowerBound > r.Latency {
			t.Errorf("scale %g: gap %s (lower bound %.4f, latency %.4f), want %s", c.scale, s, r.LowerBound, r.Latency, c.gap)
		}
		if !r.Split.Fits() || !r.Contiguous {
			t.Errorf("scale %g: IP split fits %v contiguous %v", c.scale, r.Split.Fits(), r.Contiguous)
		}
	}
}

// Reference: Tarnawski et al., Table 4, GNMT layer graph: greedy 268.50,
// max-load DP 244.33, IP 225.6 (within 1% in 3 minutes). The baselines
// match the paper; the program's interval split (chainSplit) finds 225.65
// at once, and the gap it reports is proven (the relaxation, Z3's
// refutations).
func TestSampleLatencyGNMTBaselines(t *testing.T) {
	testskip.Short(t, "the max-load DP with 8 CPUs and seconds of Z3")
	g := loadPaper(t, "latency/gnmt_inference.json")
	r, err := RunSampleLatency(context.Background(), g, SampleLatencyOptions{TimeLimit: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range r.Baselines {
		got[b.Method] = fmt.Sprintf("%.2f", b.Latency)
	}
	if got["greedy"] != "268.50" || got["max-load dp"] != "244.33" {
		t.Errorf("baselines %v, paper greedy 268.50, max-load DP 244.33", got)
	}
	if r.Latency > 225.66 || r.LowerBound < 219 || r.LowerBound > r.Latency || r.Found == "max-load dp" {
		t.Errorf("IP %.4f (found: %s), lower bound %.4f, paper 225.6", r.Latency, r.Found, r.LowerBound)
	}
}

// randomDAG is a small inference graph for brute force.
func randomDAG(rng *rand.Rand, n int) *Graph {
	g := &Graph{Name: "random", Accelerators: 2, CPUs: 1, Memory: 10}
	for v := range n {
		nd := Node{Acc: float64(1 + rng.Intn(5)), CPU: float64(2 + rng.Intn(9)), Size: float64(1 + rng.Intn(6)), Comm: float64(rng.Intn(3)), Class: -1}
		g.Nodes = append(g.Nodes, nd)
		for u := range v {
			if rng.Intn(3) == 0 {
				g.Edges = append(g.Edges, [2]int{u, v})
			}
		}
	}
	return g
}

// bruteLatency tries every placement of every node on the CPUs or on one
// of q subgraphs of each accelerator.
func bruteLatency(t *testing.T, g *Graph, q int) float64 {
	n := len(g.Nodes)
	choices := 1 + g.Accelerators*q
	best := math.Inf(1)
	code := make([]int, n)
	for {
		dev := make([]int, n)
		piece := make([]int, n)
		for v, c := range code {
			if c == 0 {
				dev[v] = g.Accelerators
			} else {
				dev[v], piece[v] = (c-1)/q, (c-1)%q
			}
		}
		s, err := NewSplit(g, dev)
		if err != nil {
			t.Fatal(err)
		}
		if s.Fits() {
			if sc, err := PiecesSampleLatency(s, piece); err == nil {
				best = math.Min(best, sc.Latency)
			}
		}
		i := 0
		for i < n {
			code[i]++
			if code[i] < choices {
				break
			}
			code[i] = 0
			i++
		}
		if i == n {
			return best
		}
	}
}

// Tarnawski et al. §4 (Fig. 3) and §4.1 (Fig. 4): the program's optimum is
// the least latency over every contiguous split (q = 1) and every split
// into q contiguous subgraphs per accelerator (q = 2), by brute force on
// small random graphs.
func TestMinSampleLatencyMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := range 12 {
		g := randomDAG(rng, 5)
		for _, q := range []int{1, 2} {
			want := bruteLatency(t, g, q)
			r, err := MinSampleLatency(context.Background(), g, MinSampleLatencyOptions{Subgraphs: q})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Proven || math.Abs(r.Latency-want) > 1e-6 || r.LowerBound > r.Latency+1e-9 || r.LowerBound < want-1e-3 {
				t.Errorf("graph %d, q %d: IP %.4f (lower bound %.4f, proven %v), brute force %.4f", i, q, r.Latency, r.LowerBound, r.Proven, want)
			}
			if q == 1 && r.Schedule.MaxPieces() > 1 {
				t.Errorf("graph %d: contiguous program gave a non-contiguous split", i)
			}
		}
	}
}

// The evaluator on a hand-checked example: a → b → c, a and c on one
// accelerator, b on the CPU, cut into two subgraphs in order.
func TestPiecesSampleLatency(t *testing.T) {
	g := &Graph{Accelerators: 1, CPUs: 1, Nodes: []Node{
		{Acc: 1, CPU: 10, Comm: 0.5, Class: -1},
		{Acc: 1, CPU: 3, Comm: 0.25, Class: -1},
		{Acc: 2, CPU: 10, Class: -1},
	}, Edges: [][2]int{{0, 1}, {1, 2}}}
	s, err := NewSplit(g, []int{0, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := SplitSampleLatency(s)
	if err != nil {
		t.Fatal(err)
	}
	// a: 0 + 1 + out 0.5 = 1.5; b on CPU: 4.5; c: in 0.25 + 2 = 6.75.
	if sc.Latency != 6.75 || len(sc.Subgraphs) != 2 || sc.Subgraphs[1].Piece != 1 {
		t.Errorf("latency %v, subgraphs %+v", sc.Latency, sc.Subgraphs)
	}
	// One subgraph holding a and c is not contiguous.
	if _, err := PiecesSampleLatency(s, []int{0, 0, 0}); err == nil {
		t.Error("a non-contiguous subgraph: want an error")
	}
	// Training graphs are not for this objective.
	g.Nodes[2].Backward = true
	if _, err := MinSampleLatency(context.Background(), g, MinSampleLatencyOptions{}); err == nil {
		t.Error("a training graph: want an error")
	}
}

// Reference: Tarnawski et al., Table 4, BERT-3 operator graph: greedy
// 416.20, IP 408.47 (within 1% in 3 minutes). From our greedy fill
// (414.74; its topological order differs from the published one) the
// local search of MinSampleLatency reaches the paper's 408.47 by itself.
func TestLocalSearchBERT3(t *testing.T) {
	testskip.Short(t, "a few seconds of local search")
	g := paperSetting(t, "operator/bert_l-3_inference.json", 1)
	gs, err := GreedyFill(g)
	if err != nil {
		t.Fatal(err)
	}
	pred := make([][]int, len(g.Nodes))
	for _, e := range g.Edges {
		pred[e[1]] = append(pred[e[1]], e[0])
	}
	t0 := time.Now()
	s, pieces, sc := localSearch(context.Background(), g, gs, cutPieces(g, gs.Device, pred), 1)
	if got := fmt.Sprintf("%.2f", sc.Latency); got != "408.47" {
		t.Errorf("local search latency %s, paper's IP 408.47", got)
	}
	if !s.Fits() || !s.Colocated || sc.MaxPieces() != 1 {
		t.Errorf("fits %v, colocated %v, pieces %d", s.Fits(), s.Colocated, sc.MaxPieces())
	}
	if again, err := PiecesSampleLatency(s, pieces); err != nil || again.Latency != sc.Latency {
		t.Errorf("re-evaluated %v (%v)", again, err)
	}
	t.Logf("%.4f in %v", sc.Latency, time.Since(t0))
}
