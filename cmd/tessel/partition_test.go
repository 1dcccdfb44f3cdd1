package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/golden"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

const gptLike = "../../testdata/models/gpt-like.json"

// timeLine masks the one line of tessel partition that depends on the
// clock.
var timeLine = regexp.MustCompile(`(?m)^time {11}.*$`)

// The text of tessel partition on the GPT-like profile, byte for byte but
// for its time: the embedding alone on device 0, the DP's 12.00 per sample
// beside the even split's 16.20.
func TestPartitionGolden(t *testing.T) {
	code, out, errOut := runCLI(t, "partition", "--model", gptLike)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden.Check(t, "partition-gpt-like.txt", []byte(timeLine.ReplaceAllString(out, "time           (masked)")))
}

// --out writes a placement that tessel search reads, refuses to replace
// it without --force, and writes the same bytes every time.
func TestPartitionOutFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p.json")
	if code, _, errOut := runCLI(t, "partition", "--model", gptLike, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := placement.Load(out); err != nil {
		t.Fatalf("written placement: %v", err)
	}
	code, _, errOut := runCLI(t, "partition", "--model", gptLike, "--out", out)
	if code != 2 || !strings.Contains(errOut, "exists (use --force") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("second write without --force: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "partition", "--model", gptLike, "--out", out, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	second, _ := os.ReadFile(out)
	if string(first) != string(second) {
		t.Error("the same model wrote different placements")
	}
	code, stdout, errOut := runCLI(t, "search", "--placement-file", out, "--micro-batches", "8", "--json")
	if code != 0 {
		t.Fatalf("search on the written placement: exit %d: %s", code, errOut)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum["valid"] != true {
		t.Errorf("search summary %v (%v)", sum, err)
	}
}

// tessel plan on the GPT-like profile with its heavy embedding: the DP's
// time per sample beside the even split's, and a verified schedule whose
// steady state runs at the split's max load.
func TestPlanGPTLike(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "s.json")
	code, stdout, errOut := runCLI(t, "plan", "--model", gptLike, "--micro-batches", "16", "--json", "--out", sched)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Partition struct {
			MaxLoad   float64 `json:"max_load"`
			Baselines []struct {
				Method  string  `json:"method"`
				MaxLoad float64 `json:"max_load"`
			} `json:"baselines"`
		} `json:"partition"`
		Schedule struct {
			Valid      bool    `json:"valid"`
			Makespan   int     `json:"makespan"`
			BubbleRate float64 `json:"bubble_rate"`
			Period     int     `json:"period"`
		} `json:"schedule"`
		TimePerSample float64 `json:"time_per_sample"`
		EvenPerSample float64 `json:"even_time_per_sample"`
		PeriodTime    float64 `json:"period_time"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if res.TimePerSample != 12 || res.EvenPerSample != 16.2 {
		t.Errorf("time per sample %v (want 12), even split %v (want 16.2)", res.TimePerSample, res.EvenPerSample)
	}
	if !res.Schedule.Valid || res.Schedule.Makespan <= 0 {
		t.Errorf("schedule %+v", res.Schedule)
	}
	// The embedding's stage is not the bottleneck: the steady state runs
	// at the largest stage load, 24 half-units = 12.
	if res.PeriodTime != 12 {
		t.Errorf("period %d steps = %v per micro-batch, want 12", res.Schedule.Period, res.PeriodTime)
	}
	s, err := schedule.Load(sched)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Errorf("written schedule: %v", err)
	}
	// Text form: the same figures for people.
	code, text, errOut := runCLI(t, "plan", "--model", gptLike, "--micro-batches", "16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"time per sample  12.00 (the even split by layer count: 16.20, 1.35× slower)", "verified     yes"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan output lacks %q:\n%s", want, text)
		}
	}
}

// Every bad model file, and bad flags: exit 2 and one line naming the
// problem.
func TestPartitionBadInput(t *testing.T) {
	files, err := filepath.Glob("../../testdata/bad-models/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad models: %v", err)
	}
	cases := [][]string{
		{"partition"},
		{"partition", "--model", "no-such-file.json"},
		{"partition", "--model", gptLike, "--order", "zigzag"},
		{"partition", "--model", gptLike, "--order", "v", "--chunks", "3"},
		{"partition", "--model", gptLike, "--memory", "5"},
		{"partition", "--model", gptLike, "--chunks", "0"},
		{"partition", "--model", gptLike, "--devices", "-1"},
		{"partition", "--model", gptLike, "--chunks", "2", "--non-contiguous"},
		{"partition", "--model", "../../testdata/models/branches.json", "--devices", "3", "--chunks", "3"},
		{"plan", "--model", gptLike, "--budget", "-1"},
		{"partition", "--model", gptLike, "--cpus", "1"},
	}
	for _, f := range files {
		cases = append(cases, []string{"partition", "--model", f}, []string{"plan", "--model", f})
	}
	for _, args := range cases {
		code, _, errOut := runCLI(t, args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tessel: ") || strings.Contains(errOut, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// One of Tarnawski et al.'s published graphs through the command line:
// its own devices and cap, and the paper's figures (Reference: Tarnawski
// et al., "Efficient Algorithms for Device Placement of DNN Graph
// Operators", Table 1, BERT-24 layer inference: 30 ideals, DP 17.79,
// expert 20.08).
func TestPartitionPaperGraph(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "dnn-partitioning")
	code, stdout, errOut := runCLI(t, "partition", "--model", filepath.Join(dir, "layer", "bert24_inference.json"),
		"--expert", filepath.Join(dir, "experts", "bert24_inference_expert.json"), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res partition.Report
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Accelerators != 6 || res.CPUs != 1 || res.Ideals != 30 {
		t.Errorf("%d accelerators, %d CPUs, %d ideals", res.Accelerators, res.CPUs, res.Ideals)
	}
	got := map[string]string{}
	for _, b := range res.Baselines {
		got[b.Method] = fmt.Sprintf("%.2f", b.MaxLoad)
	}
	if got["dp"] != "17.79" || got["expert"] != "20.08" {
		t.Errorf("max load %s, expert %s; paper 17.79 and 20.08", got["dp"], got["expert"])
	}
}

// --chunks 2 --order v: eight stages, down the devices and back up, a
// forward and a backward block each.
func TestPartitionChunksV(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.json")
	code, stdout, errOut := runCLI(t, "partition", "--model", gptLike, "--chunks", "2", "--order", "v", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res partition.Report
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	var devs []int
	for _, st := range res.Stages {
		devs = append(devs, st.Device)
	}
	if got, want := jsonInts(devs), "[0,1,2,3,3,2,1,0]"; got != want {
		t.Errorf("stage devices %s, want %s", got, want)
	}
	if res.MaxLoad != 13.2 {
		t.Errorf("max device load %v, want 13.2", res.MaxLoad)
	}
	p, err := placement.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Devices != 4 || len(p.Blocks) != 16 {
		t.Errorf("%d devices, %d blocks; want 4 and 16", p.Devices, len(p.Blocks))
	}
}

func jsonInts(xs []int) string {
	b, _ := json.Marshal(xs)
	return string(b)
}

// tessel plan on a profile in bytes (GPT-7B on 80 GB devices): each
// device's budget is what its stages leave of its memory; the schedule
// fits it, never "memory unlimited"; with --offload and --recompute it
// names the instances it offloads or recomputes and is faster than
// without; on 40 GB devices it says which device cannot fit, exit 1.
func TestPlanBytes(t *testing.T) {
	const model = "../../testdata/models/gpt-7b-bytes.json"
	type planJSON struct {
		Schedule struct {
			Valid      bool  `json:"valid"`
			Makespan   int   `json:"makespan"`
			PeakMemory []int `json:"peak_memory"`
			Offloaded  *int  `json:"offloaded"`
			Recomputed *int  `json:"recomputed"`
		} `json:"schedule"`
		Memory *struct {
			Bytes   bool `json:"bytes"`
			Devices []struct {
				Budget int     `json:"budget"`
				Static float64 `json:"static"`
			} `json:"devices"`
		} `json:"memory"`
	}
	run := func(args ...string) planJSON {
		t.Helper()
		code, stdout, errOut := runCLI(t, append([]string{"plan", "--model", model, "-n", "16", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var r planJSON
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain := run()
	if plain.Memory == nil || !plain.Memory.Bytes || len(plain.Memory.Devices) != 4 {
		t.Fatalf("memory %+v", plain.Memory)
	}
	for d, m := range plain.Memory.Devices {
		if m.Budget < 1 || plain.Schedule.PeakMemory[d] > m.Budget {
			t.Errorf("device %d: peak %d, budget %d", d, plain.Schedule.PeakMemory[d], m.Budget)
		}
	}
	saved := run("--offload", "--recompute")
	if !saved.Schedule.Valid || saved.Schedule.Offloaded == nil || *saved.Schedule.Offloaded+*saved.Schedule.Recomputed == 0 {
		t.Fatalf("with --offload --recompute: %+v", saved.Schedule)
	}
	if saved.Schedule.Makespan >= plain.Schedule.Makespan {
		t.Errorf("makespan %d with offload and recompute, %d without: want faster", saved.Schedule.Makespan, plain.Schedule.Makespan)
	}
	t.Logf("GPT-7B, 4 × 80 GB, N = 16: makespan %d steps without offload or recompute, %d with (%d offloaded, %d recomputed)",
		plain.Schedule.Makespan, saved.Schedule.Makespan, *saved.Schedule.Offloaded, *saved.Schedule.Recomputed)
	code, text, errOut := runCLI(t, "plan", "--model", model, "-n", "16", "--offload", "--recompute")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"held for good", "budget (units)", "memory [50.47 GB, 53.69 GB, 53.69 GB, 50.47 GB]", "(budget [50.47 GB, 53.69 GB, 53.69 GB, 50.47 GB])", "offloaded    f0 × "} {
		if !strings.Contains(text, want) {
			t.Errorf("plan output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "unlimited") {
		t.Errorf("plan says unlimited with a capacity:\n%s", text)
	}
	// 40 GB devices: device 0 cannot hold its stages and one micro-batch.
	small := filepath.Join(t.TempDir(), "small.json")
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, []byte(strings.Replace(string(data), `"device_bytes": 80000000000`, `"device_bytes": 40000000000`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "plan", "--model", small, "-n", "16", "--offload", "--recompute")
	if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "device 0 cannot run its stages even with offload and recompute") {
		t.Errorf("40 GB devices: exit %d, %q", code, errOut)
	}
}

// A profile with a capacity in its own units (gpt-like, "memory" 24)
// gives every device a budget too.
func TestPlanGPTLikeBudgets(t *testing.T) {
	code, text, errOut := runCLI(t, "plan", "--model", gptLike, "--micro-batches", "16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(text, "(budget [12 6 4 3])") || strings.Contains(text, "unlimited") {
		t.Errorf("plan output:\n%s", text)
	}
}

// A cluster's "memory_bytes" replaces the profile's device memory, device
// by device: device 3 (96 GB) gets a larger budget than with 80 GB; the
// split on the cluster puts it first (stage 0, placement device 0).
func TestPlanClusterBytes(t *testing.T) {
	const model = "../../testdata/models/gpt-7b-bytes.json"
	code, text, errOut := runCLI(t, "plan", "--model", model, "-n", "16", "--cluster", "../../testdata/clusters/four-80gb.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(text, "(budget [66.57 GB, 53.69 GB, 53.69 GB, 50.47 GB])") || !strings.Contains(text, "96.00 GB") {
		t.Errorf("plan output:\n%s", text)
	}
	code, _, errOut = runCLI(t, "plan", "--model", gptLike, "-n", "16", "--cluster", "../../testdata/clusters/four-80gb.json")
	if code != 2 || !strings.Contains(errOut, `"memory_bytes" needs a profile in bytes`) {
		t.Errorf("memory_bytes with a profile in units: exit %d, %q", code, errOut)
	}
}

// partition --format megatron-layout prints Megatron-Core's arguments of
// the split, and refuses in one line what Megatron cannot take.
func TestPartitionMegatronLayout(t *testing.T) {
	model := filepath.Join("..", "..", "testdata", "models", "megatron-gpt.json")
	code, out, errOut := runCLI(t, "partition", "--model", model, "--format", "megatron-layout")
	want := "--pipeline-model-parallel-size 4 --pipeline-model-parallel-layout \"Et|t*5|t*5|t*3L\"\n" +
		"--num-layers 14 --decoder-first-pipeline-num-layers 1 --decoder-last-pipeline-num-layers 3\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"partition", "--model", gptLike, "--format", "megatron-layout"}, `layer "head": not named as a Megatron-Core kind`},
		{[]string{"partition", "--model", model, "--format", "megatron-layout", "--chunks", "2", "--order", "v"}, "stage 4 is on device 3"},
		{[]string{"partition", "--model", model, "--format", "yaml"}, `--format must be text or megatron-layout, got "yaml"`},
		{[]string{"partition", "--model", model, "--format", "megatron-layout", "--json"}, "do not go together"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.err)
		}
	}
}

// tessel partition --objective latency on Tarnawski et al.'s BERT-24 layer
// inference graph at the memory-bound setting of their §7, with the
// transfer costs that their Table 4 implies (greedy 100.22, max-load DP
// 108.03, IP 100.22): the text byte for byte but for its time, and the
// JSON's latencies and gap.
func TestPartitionLatencyBERT24(t *testing.T) {
	model := filepath.Join("..", "..", "testdata", "dnn-partitioning", "layer", "bert24_inference.json")
	args := []string{"partition", "--model", model, "--objective", "latency", "--paper-memory", "--comm-scale", "1000", "--time-limit", "20s"}
	code, out, errOut := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden.Check(t, "partition-latency-bert24.txt", []byte(timeLine.ReplaceAllString(out, "time           (masked)")))
	code, out, errOut = runCLI(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res partition.SampleLatencyReport
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range res.Baselines {
		got[b.Method] = fmt.Sprintf("%.2f", b.Latency)
	}
	if res.Accelerators != 5 || res.CPUs != 8 || res.MemoryCap != 629145600 || got["ip"] != "100.22" || got["greedy"] != "100.22" || got["max-load dp"] != "108.03" {
		t.Errorf("%d accelerators, %d CPUs, cap %g, latencies %v", res.Accelerators, res.CPUs, res.MemoryCap, got)
	}
	if res.Gap < 0 || res.Gap > 1e-4 || !res.Proven {
		t.Errorf("gap %v, proven %v", res.Gap, res.Proven)
	}
}

// --non-contiguous: Tarnawski et al.'s §4.1 program with q subgraphs per
// accelerator; on BERT-24 (a chain) one subgraph each is already optimal.
// --expert: the paper's expert split, Table 4's 111.94.
func TestPartitionLatencyNonContiguousExpert(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "dnn-partitioning")
	code, out, errOut := runCLI(t, "partition", "--model", filepath.Join(dir, "layer", "bert24_inference.json"), "--objective", "latency",
		"--non-contiguous", "--subgraphs", "3", "--comm-scale", "1000", "--expert", filepath.Join(dir, "experts", "bert24_inference_expert.json"), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res partition.SampleLatencyReport
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range res.Baselines {
		got[b.Method] = fmt.Sprintf("%.2f", b.Latency)
	}
	if res.Subgraphs != 3 || got["expert"] != "111.94" || res.Latency > 111.94 || res.Gap > 1e-4 {
		t.Errorf("q %d, latencies %v, gap %v", res.Subgraphs, got, res.Gap)
	}
}

// Bad flags of the latency objective: exit 2 and one line.
func TestPartitionLatencyBadInput(t *testing.T) {
	bert := filepath.Join("..", "..", "testdata", "dnn-partitioning", "layer", "bert24_inference.json")
	training := filepath.Join("..", "..", "testdata", "dnn-partitioning", "layer", "bert24_training.json")
	for _, args := range [][]string{
		{"partition", "--model", bert, "--objective", "speed"},
		{"partition", "--model", bert, "--time-limit", "5s"},
		{"partition", "--model", bert, "--paper-memory"},
		{"partition", "--model", bert, "--objective", "latency", "--time-limit", "0s"},
		{"partition", "--model", bert, "--objective", "latency", "--comm-scale", "0"},
		{"partition", "--model", bert, "--objective", "latency", "--chunks", "2"},
		{"partition", "--model", bert, "--objective", "latency", "--subgraphs", "2"},
		{"partition", "--model", bert, "--objective", "latency", "--non-contiguous", "--subgraphs", "0"},
		{"partition", "--model", bert, "--objective", "latency", "--paper-memory", "--devices", "4"},
		{"partition", "--model", training, "--objective", "latency"},
		{"partition", "--model", gptLike, "--objective", "latency", "--paper-memory"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tessel: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
