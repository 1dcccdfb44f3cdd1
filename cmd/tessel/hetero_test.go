package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	chain12     = "../../testdata/hetero/chain-12.json"
	fourOneSlow = "../../testdata/hetero/four-one-slow.json"
)

// partition --cluster: the split on the cluster beside the speed-oblivious
// splits evaluated there (Wu et al. §4.1).
func TestPartitionCluster(t *testing.T) {
	code, text, errOut := runCLI(t, "partition", "--model", chain12, "--cluster", fourOneSlow)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"proven the least", "device order   [", "\ncluster ", "\noblivious ", "\neven "} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	code, out, errOut := runCLI(t, "partition", "--model", chain12, "--cluster", fourOneSlow, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Split, Even, Oblivious struct {
			MaxLoad float64 `json:"max_load"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !(r.Split.MaxLoad < r.Even.MaxLoad && r.Split.MaxLoad < r.Oblivious.MaxLoad) {
		t.Errorf("split %v, even %v, oblivious %v", r.Split.MaxLoad, r.Even.MaxLoad, r.Oblivious.MaxLoad)
	}
}

// plan --parallel auto --json lists every evaluated layout with its
// degrees and time, the least first, and the pruned ones with their
// reasons; the bytes do not depend on the workers.
func TestPlanParallelAuto(t *testing.T) {
	model, cl := "../../testdata/hetero/gpt-34.json", "../../testdata/hetero/s1-far-8.json"
	var outs []string
	for _, j := range []string{"1", "2"} {
		code, out, errOut := runCLI(t, "plan", "--model", model, "--cluster", cl, "-n", "32", "--parallel", "auto", "--json", "--jobs", j)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("--jobs 1 and 2 differ")
	}
	var r struct {
		Plans []struct {
			DP, TP, PP *int
			Time       *float64
		}
		Pruned []struct {
			Reason string
		}
		PrunedBy map[string]int `json:"pruned_by"`
		Best     struct{ Time float64 }
		Baseline *struct{ Time float64 }
	}
	if err := json.Unmarshal([]byte(outs[0]), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Plans) == 0 || len(r.Plans)+len(r.Pruned) != 10 || r.Baseline == nil {
		t.Fatalf("%d plans, %d pruned, baseline %v", len(r.Plans), len(r.Pruned), r.Baseline)
	}
	for i, p := range r.Plans {
		if p.DP == nil || p.TP == nil || p.PP == nil || p.Time == nil || *p.Time < r.Best.Time || i == 0 && *p.Time != r.Best.Time {
			t.Errorf("plan %d: %+v, best %v", i, p, r.Best.Time)
		}
	}
	n := 0
	for _, k := range r.PrunedBy {
		n += k
	}
	if n != len(r.Pruned) {
		t.Errorf("pruned_by %v for %d pruned", r.PrunedBy, len(r.Pruned))
	}
	code, text, errOut := runCLI(t, "plan", "--model", model, "--cluster", cl, "-n", "32", "--parallel", "auto")
	if code != 0 || !strings.Contains(text, "\nmegatron ") || !strings.Contains(text, "\n1  ") || !strings.Contains(text, "pruned (") {
		t.Errorf("exit %d, stderr %q:\n%s", code, errOut, text)
	}
}

// Bad uses of the new flags: one line, exit 2.
func TestClusterFlagsBad(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"partition", "--model", chain12, "--cluster", fourOneSlow, "--chunks", "2"}, "one stage per device"},
		{[]string{"partition", "--model", chain12, "--cluster", fourOneSlow, "--devices", "3"}, "--devices 3 for a cluster of 4 devices"},
		{[]string{"partition", "--model", chain12, "--cluster-out", "x.json"}, "--cluster-out needs --cluster"},
		{[]string{"partition", "--model", "../../testdata/dnn-partitioning/layer/bert24_inference.json", "--cluster", fourOneSlow}, "needs a layer profile"},
		{[]string{"partition", "--model", chain12, "--cluster", "../../testdata/bad/clusters/node-negative.json"}, "node must be in 0..4095, got -2"},
		{[]string{"partition", "--model", chain12, "--cluster", "../../testdata/hetero/s1-far-16.json"}, "12 layers for 16 devices"},
		{[]string{"plan", "--model", chain12, "--parallel", "auto"}, "--parallel auto needs --cluster"},
		{[]string{"plan", "--model", chain12, "--cluster", fourOneSlow, "--parallel", "manual"}, `--parallel must be auto, got "manual"`},
		{[]string{"plan", "--model", chain12, "--cluster", fourOneSlow, "--parallel", "auto", "--budget", "4"}, "--parallel auto takes"},
		{[]string{"plan", "--model", chain12, "--jobs", "2"}, "go with --parallel auto"},
		{[]string{"plan", "--model", chain12, "--cluster", fourOneSlow, "--parallel", "auto", "--tp", "-1"}, "must be at least 0"},
		{[]string{"plan", "--model", chain12, "--cluster", fourOneSlow, "--parallel", "auto", "--micro-batch-sizes", "1,x"}, `--micro-batch-sizes: "x" is not a size`},
		{[]string{"plan", "--model", chain12, "--micro-batch-sizes", "2"}, "go with --parallel auto"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.err)
		}
	}
}

// plan --parallel auto --chunks C enumerates 1..C stages per device:
// every plan and pruned layout in --json lists its chunks; without
// --chunks none does.
func TestPlanParallelAutoChunks(t *testing.T) {
	model, cl := "../../testdata/hetero/chain-12.json", "../../testdata/hetero/four-one-slow.json"
	code, out, errOut := runCLI(t, "plan", "--model", model, "--cluster", cl, "-n", "16", "--parallel", "auto", "--chunks", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Plans []struct {
			Chunks *int `json:"chunks"`
		} `json:"plans"`
		Pruned []struct {
			Chunks *int `json:"chunks"`
		} `json:"pruned"`
		Tried []int `json:"chunks_tried"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range r.Plans {
		if p.Chunks == nil {
			t.Fatalf("a plan without its chunks: %s", out)
		}
		seen[*p.Chunks] = true
	}
	for _, p := range r.Pruned {
		if p.Chunks == nil {
			t.Fatalf("a pruned layout without its chunks")
		}
		seen[*p.Chunks] = true
	}
	if !seen[1] || !seen[2] || !seen[3] || len(r.Tried) != 3 {
		t.Errorf("chunks seen %v, tried %v", seen, r.Tried)
	}
	code, out, _ = runCLI(t, "plan", "--model", model, "--cluster", cl, "-n", "16", "--parallel", "auto", "--json")
	if code != 0 || strings.Contains(out, "chunks") {
		t.Errorf("without --chunks: exit %d, chunks listed", code)
	}
}
