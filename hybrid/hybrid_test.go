package hybrid

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/testskip"
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

// Wu et al. §3.3: every layout is enumerated, pruned without a
// simulation or evaluated; the chosen one is the least; the result does
// not depend on the number of workers.
func TestPlanEnumeratesPrunesAndIsDeterministic(t *testing.T) {
	for _, tc := range []struct{ model, cluster string }{
		{"../testdata/hetero/chain-12.json", "../testdata/hetero/four-one-slow.json"},
		{"../testdata/hetero/gpt-34.json", "../testdata/hetero/s1-far-8.json"},
	} {
		g, c := load(t, tc.model, tc.cluster)
		var outs [][]byte
		for _, jobs := range []int{1, 3} {
			res, err := Plan(context.Background(), g, c, Options{MicroBatches: 16, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			// Every (dp, tp, pp) of the devices: evaluated or pruned.
			n := 0
			for tp := 1; tp <= len(c.Devices); tp++ {
				for pp := 1; pp <= len(c.Devices)/tp; pp++ {
					if len(c.Devices)%(tp*pp) == 0 {
						n++
					}
				}
			}
			total := 0
			for _, k := range res.PrunedBy {
				total += k
			}
			if len(res.Plans)+len(res.Pruned) != n || total != len(res.Pruned) {
				t.Errorf("%s: %d plans + %d pruned (%v), want %d layouts", tc.cluster, len(res.Plans), len(res.Pruned), res.PrunedBy, n)
			}
			for _, p := range res.Plans {
				if p.Time < res.Best.Time || p.DP*p.TP*p.PP != len(c.Devices) || p.Time < p.Bound*(1-1e-9) {
					t.Errorf("%s: plan %+v against best %v", tc.cluster, p, res.Best.Time)
				}
			}
			for _, p := range res.Pruned {
				if p.Reason == "" || p.Detail == "" {
					t.Errorf("%s: pruned without a reason: %+v", tc.cluster, p)
				}
			}
			if res.Baseline == nil || res.Baseline.Time < res.Best.Time {
				t.Errorf("%s: baseline %+v, best %v", tc.cluster, res.Baseline, res.Best.Time)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, b)
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Errorf("%s: 1 and 3 workers differ", tc.cluster)
		}
	}
}

// Micro-batch sizes multiply the layouts: every one evaluated runs the
// iteration's samples (dp · micro-batches · size), and trying more sizes
// never gives a worse best.
func TestMicroBatchSizes(t *testing.T) {
	g, c := load(t, "../testdata/hetero/chain-12.json", "../testdata/hetero/four-one-slow.json")
	one, err := Plan(context.Background(), g, c, Options{MicroBatches: 16})
	if err != nil {
		t.Fatal(err)
	}
	more, err := Plan(context.Background(), g, c, Options{MicroBatches: 16, MicroBatchSizes: []int{1, 2, 4, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(more.Plans)+len(more.Pruned) != 4*(len(one.Plans)+len(one.Pruned)) || more.PrunedBy["batch"] == 0 {
		t.Errorf("%d plans, %d pruned (%v) for 4 sizes; %d layouts with one", len(more.Plans), len(more.Pruned), more.PrunedBy, len(one.Plans)+len(one.Pruned))
	}
	for _, p := range more.Plans {
		if p.DP*p.MicroBatches*p.MicroBatchSize != 16 {
			t.Errorf("layout %+v does not run 16 samples", p)
		}
	}
	if more.Best.Time > one.Best.Time {
		t.Errorf("best with sizes 1, 2, 4, 3: %v, with 1: %v", more.Best.Time, one.Best.Time)
	}
	if _, err := Plan(context.Background(), g, c, Options{MicroBatches: 16, MicroBatchSizes: []int{0}}); err == nil {
		t.Error("size 0 accepted")
	}
}

// The best layout is no worse than any layout of a given tensor-parallel
// degree evaluated alone (Wu et al. §4.2: the time of each TP degree).
func TestBestBeatsEveryDegree(t *testing.T) {
	g, c := load(t, "../testdata/hetero/gpt-34.json", "../testdata/hetero/s2-bw-low.json")
	all, err := Plan(context.Background(), g, c, Options{MicroBatches: 32})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range []int{1, 2, 4} {
		one, err := Plan(context.Background(), g, c, Options{MicroBatches: 32, Degrees: func(_, t, _ int) bool { return t == tp }})
		if err != nil {
			t.Fatal(err)
		}
		if one.Best.TP != tp || one.Best.Time < all.Best.Time {
			t.Errorf("tp %d: best %+v, all layouts' best %v", tp, one.Best, all.Best.Time)
		}
	}
}

// Wu et al. §3.3 enumerates the stages per device as well (virtual
// stages; Narayanan et al., "Efficient Large-Scale Language Model
// Training on GPU Clusters Using Megatron-LM", §2.2): every (dp, tp, pp,
// chunks) is evaluated or pruned, every plan lists its chunks and cuts
// the model into chunks·pp stages, interleaved over the groups; the
// result does not depend on the number of workers.
func TestPlanEnumeratesStagesPerDevice(t *testing.T) {
	g, c := load(t, "../testdata/hetero/gpt-34.json", "../testdata/hetero/s1-far-8.json")
	chunks := []int{1, 2, 3}
	var outs [][]byte
	for _, jobs := range []int{1, 3} {
		res, err := Plan(context.Background(), g, c, Options{MicroBatches: 64, Jobs: jobs, Chunks: chunks})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for tp := 1; tp <= len(c.Devices); tp++ {
			for pp := 1; pp <= len(c.Devices)/tp; pp++ {
				if len(c.Devices)%(tp*pp) == 0 {
					n += len(chunks)
				}
			}
		}
		if len(res.Plans)+len(res.Pruned) != n {
			t.Fatalf("%d plans + %d pruned, want %d layouts", len(res.Plans), len(res.Pruned), n)
		}
		seen := map[int]bool{}
		for _, p := range res.Plans {
			if p.Chunks < 1 || p.Chunks > 3 || len(p.Stages) != p.Chunks*p.PP || p.Time < res.Best.Time {
				t.Errorf("plan %+v", p)
			}
			for i := range p.Stages {
				if fmtInts(p.Groups[i]) != fmtInts(p.Groups[i%p.PP]) {
					t.Errorf("dp %d tp %d pp %d chunks %d: stage %d on %v, not on stage %d's group %v", p.DP, p.TP, p.PP, p.Chunks, i, p.Groups[i], i%p.PP, p.Groups[i%p.PP])
				}
			}
			seen[p.Chunks] = true
		}
		for _, p := range res.Pruned {
			if p.Chunks < 1 {
				t.Errorf("pruned %+v without its chunks", p)
			}
		}
		if !seen[2] {
			t.Errorf("no plan with 2 stages per device evaluated")
		}
		if res.Baseline == nil || res.Baseline.Chunks != 1 {
			t.Errorf("baseline %+v, want Megatron's layout with one stage per device", res.Baseline)
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(res); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, buf.Bytes())
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("the result depends on the number of workers")
	}
}

func fmtInts(xs []int) string { return fmt.Sprint(xs) }

// Layouts charge the traffic between pipeline stages on the links that
// carry it, at its own time: on the Llama-7B-like profile and the mixed
// cluster (two nodes), the best layout's time never falls as the
// inter-node link slows, and is strictly higher than on a free link
// wherever its stages span the nodes — even at 8e-8 per byte, a hop of
// 2.7 ms, which a step of the search's time unit would hide; the result
// is in the model's unit.
func TestLayoutsChargeTheirTraffic(t *testing.T) {
	testskip.Short(t, "four plans of a 34-layer model")
	g, c := load(t, "../testdata/models/llama7b.json", "../testdata/clusters/llama-mixed.json")
	last, first := 0.0, 0.0
	for i, perUnit := range []float64{0, 8e-8, 2e-6, 1e-5} {
		cl := c.Clone()
		cl.Default.PerUnit = perUnit
		res, err := Plan(context.Background(), g, cl, Options{MicroBatches: 32})
		if err != nil {
			t.Fatalf("per unit %g: %v", perUnit, err)
		}
		if res.Unit != "ms" {
			t.Errorf("unit %q", res.Unit)
		}
		b := res.Best
		if b.Time < last*(1-1e-9) {
			t.Errorf("per unit %g: best %v, below %v on a faster link", perUnit, b.Time, last)
		}
		spans := false
		for _, grp := range b.Groups[1:] {
			spans = spans || cl.Devices[grp[0]].Node != cl.Devices[b.Groups[0][0]].Node
		}
		if perUnit > 0 && spans && !(b.Time > first) {
			t.Errorf("stages across nodes at %g per byte: %v, not above %v on a free link", perUnit, b.Time, first)
		}
		if i == 0 {
			first = b.Time
		}
		last = b.Time
	}
}

// Pipeline traffic is charged on the links that carry it: as the link
// between the two nodes slows (its time per unit of the activations and
// gradients between stages), the best layout's time never falls, and a
// pipeline whose stages span both nodes is strictly slower on a slow link
// than on a free one.
func TestInterNodeLinkCharged(t *testing.T) {
	// Four fast GPUs in node 0, four slow ones in node 1; the link
	// between the nodes is the cluster's default.
	g, c := load(t, "../testdata/models/llama7b.json", "../testdata/clusters/llama-mixed.json")
	across := func(dp, tp, pp int) bool { return dp == 1 && tp == 1 && pp == 8 } // stages on both nodes
	var prev float64
	var flat [2]float64 // across both nodes: free link, 2e-6
	for _, perUnit := range []float64{0, 8e-8, 2e-6, 1e-5} {
		cc := c.Clone()
		cc.Default.Latency, cc.Default.PerUnit = 0, perUnit
		res, err := Plan(context.Background(), g, cc, Options{MicroBatches: 32})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("inter-node link %g per unit: best dp %d tp %d pp %d, %.2f", perUnit, res.Best.DP, res.Best.TP, res.Best.PP, res.Best.Time)
		if res.Best.Time < prev {
			t.Errorf("inter-node link %g per unit: best %+v takes %v, less than %v on a faster link", perUnit, res.Best, res.Best.Time, prev)
		}
		prev = res.Best.Time
		if perUnit != 0 && perUnit != 2e-6 {
			continue
		}
		one, err := Plan(context.Background(), g, cc, Options{MicroBatches: 32, Degrees: across})
		if err != nil {
			t.Fatal(err)
		}
		nodes := map[int]bool{}
		for _, grp := range one.Best.Groups {
			nodes[cc.Devices[grp[0]].Node] = true
		}
		if len(nodes) != 2 {
			t.Fatalf("pp 8: stages on nodes %v, want both", nodes)
		}
		t.Logf("inter-node link %g per unit: pp 8 across the nodes, %.2f", perUnit, one.Best.Time)
		flat[min(1, int(perUnit*1e6))] = one.Best.Time
	}
	if flat[1] <= flat[0] {
		t.Errorf("stages across both nodes: %v with a free link, %v at 2e-6 per unit; want strictly slower", flat[0], flat[1])
	}
}

// Stages per device share the device's memory, never split it: on 24 GB
// devices, where the layouts with one stage per device leave room for a
// few micro-batches, two stages per device are pruned by memory only
// where no schedule fits, and a layout with chunks is evaluated.
func TestChunksKeepCapacity(t *testing.T) {
	g, c := load(t, "../testdata/models/llama7b.json", "../testdata/clusters/llama-8x24.json")
	res, err := Plan(context.Background(), g, c, Options{MicroBatches: 16, Chunks: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	chunked := false
	for _, p := range res.Plans {
		chunked = chunked || p.Chunks == 2
	}
	for _, p := range res.Pruned {
		if p.Chunks == 2 && p.Reason == "memory" && !strings.Contains(p.Detail, "split") {
			t.Errorf("pruned by memory with a split that fits: %+v", p)
		}
	}
	if !chunked {
		t.Errorf("no layout with 2 stages per device evaluated: %+v", res.Pruned)
	}
}
