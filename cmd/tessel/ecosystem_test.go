package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/megatron"
	"github.com/tessel-pp/tessel/torchcsv"
)

// Receives deferred and merged backwards from the command line: the
// deferred export reads back as the same schedule; --recv goes with
// torch-csv-comms only; simulate --torch-recv reports both orders, in
// text and JSON.
func TestExportRecvAndMerge(t *testing.T) {
	dir := t.TempDir()
	early, deferred := filepath.Join(dir, "e.csv"), filepath.Join(dir, "d.csv")
	for _, tc := range []struct{ out, recv, form string }{{early, "early", "compute_comms)"}, {deferred, "deferred", "compute_comms, receives deferred)"}} {
		if code, out, errOut := runCLI(t, "export", "-s", goldenSchedule, "--format", "torch-csv-comms", "--recv", tc.recv, "--out", tc.out); code != 0 || !strings.HasSuffix(out, tc.form+"\n") {
			t.Fatalf("--recv %s: exit %d, stdout %q, stderr %q", tc.recv, code, out, errOut)
		}
	}
	var imported []string
	for _, f := range []string{early, deferred} {
		code, out, errOut := runCLI(t, "import", "--torch-csv", f)
		if code != 0 {
			t.Fatalf("%s: exit %d, %s", f, code, errOut)
		}
		imported = append(imported, strings.TrimPrefix(out[strings.Index(out, "imported "):], "imported "+f))
	}
	if imported[0] != imported[1] {
		t.Errorf("early and deferred import differently: %q, %q", imported[0], imported[1])
	}
	code, out, errOut := runCLI(t, "simulate", "-s", goldenSchedule, "--torch-recv", "--comm-time", "3", "--json")
	var rep struct {
		Torch torchcsv.RecvComparison `json:"torch_recv"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Torch.Early == nil || rep.Torch.Shorter != torchcsv.RecvDeferred {
		t.Errorf("simulate --torch-recv --json: exit %d, %q, %q", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "simulate", "-s", goldenSchedule, "--torch-recv"); code != 0 || !strings.Contains(out, "a front-loaded receive delays the first compute of each stage by [0 0 0 0]") {
		t.Errorf("simulate --torch-recv: exit %d, %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"export", "-s", goldenSchedule, "--recv", "deferred"}, "--recv applies to --format torch-csv-comms"},
		{[]string{"export", "-s", goldenSchedule, "--format", "torch-csv-comms", "--recv", "late"}, `--recv must be one of early, deferred, auto, got "late"`},
		{[]string{"export", "-s", goldenSchedule, "--format", "megatron"}, "give one of --split FILE and --megatron-layout LAYOUT"},
		{[]string{"export", "-s", goldenSchedule, "--format", "megatron", "--megatron-layout", "E|t|t|tL", "--moe-layer-freq", "0"}, "--moe-layer-freq: MoE layer frequency \"0\""},
		{[]string{"simulate", "--programs", dir, "--torch-recv"}, "--torch-recv applies to --schedule"},
		{[]string{"import", "--megatron-layout", "E|t*3|(t|)*5mL", "--num-layers", "7", "--pp", "4"}, "has 8 transformer layers, not --num-layers 7"},
		{[]string{"import", "--megatron-layout", "E|tL", "--pp", "1", "--out", filepath.Join(dir, "x.json")}, "--out writes Megatron-Core's order: give --micro-batches"},
		{[]string{"import", "--torch-csv", early, "--pp", "2"}, "go with --megatron-layout"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.err)
		}
	}
	// --merge-bw on a split schedule: no I or W left in the CSV.
	zbv := filepath.Join(dir, "zbv.json")
	if code, _, errOut := runCLI(t, "import", "--torch-csv", filepath.Join("..", "..", "torchcsv", "testdata", "pytorch-zbv.csv"), "--out", zbv); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut = runCLI(t, "export", "-s", zbv, "--merge-bw")
	if code != 0 || strings.ContainsAny(out, "IW") || !strings.Contains(out, "7B0") {
		t.Errorf("--merge-bw: exit %d, %q, %q", code, out, errOut)
	}
}

// A Megatron-Core layout imported as a placement and Megatron-Core's
// order on it, exported back as arguments that parse to the same layout;
// a split with an empty stage from partition --empty-stages, exported as
// arguments from its JSON.
func TestMegatronBothWays(t *testing.T) {
	dir := t.TempDir()
	sched, plc := filepath.Join(dir, "m.json"), filepath.Join(dir, "p.json")
	code, out, errOut := runCLI(t, "import", "--megatron-layout", "E|t*3|(t|)*5mL", "--num-layers", "8", "--pp", "4", "--vpp", "2",
		"--forward-time", "2", "--backward-time", "4", "--out", sched, "-n", "12", "--group", "6", "--placement-out", plc)
	if code != 0 || !strings.Contains(out, "rank 3  decoder          mtp,loss") || !strings.Contains(out, "(groups of 6)") {
		t.Fatalf("import: exit %d, %q, %q", code, out, errOut)
	}
	args := filepath.Join(dir, "args.txt")
	if code, out, errOut := runCLI(t, "export", "-s", sched, "--format", "megatron", "--megatron-layout", "E|t*3|(t|)*5mL", "--out", args); code != 0 || !strings.Contains(out, "4 ranks, 8 stages (2 per rank)") {
		t.Fatalf("export: exit %d, %q, %q", code, out, errOut)
	}
	data, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	got, err := megatron.ParseArgs(data)
	if err != nil {
		t.Fatal(err)
	}
	l, err := megatron.ParseLayout(got["--pipeline-model-parallel-layout"], megatron.LayoutOptions{Layers: 8, PP: 4})
	if err != nil || !slices.Equal(l.Stages, []string{"E", "ttt", "t", "t", "t", "t", "t", "mL"}) || got["--microbatch-group-size-per-virtual-pipeline-stage"] != "6" {
		t.Errorf("arguments %v: %v", got, err)
	}
	// Seven layers, four ranks, two virtual stages: an empty stage.
	model := filepath.Join("..", "..", "testdata", "models", "megatron-seven.json")
	split, p7, s7 := filepath.Join(dir, "split.json"), filepath.Join(dir, "p7.json"), filepath.Join(dir, "s7.json")
	code, out, errOut = runCLI(t, "partition", "--model", model, "--chunks", "2", "--empty-stages", "--json", "--out", p7)
	if code != 0 {
		t.Fatalf("partition: exit %d, %s", code, errOut)
	}
	if err := os.WriteFile(split, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "search", "--placement-file", p7, "-n", "8", "--out", s7); code != 0 {
		t.Fatalf("search: %s", errOut)
	}
	code, out, errOut = runCLI(t, "export", "-s", s7, "--format", "megatron", "--split", split)
	if code != 0 || !strings.Contains(out, `--pipeline-model-parallel-layout "E||t|t|t|t|t|L"`) {
		t.Errorf("export of the split: exit %d, %q, %q", code, out, errOut)
	}
}
