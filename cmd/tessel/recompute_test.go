package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// plan --recompute on the Llama example at 24 GB: the JSON names the
// choice and both times, the schedule written is the chosen one and
// re-verifies, and export writes the policy as Megatron-Core's arguments
// and torchtitan's settings.
func TestPlanRecomputePolicy(t *testing.T) {
	testskip.Short(t, "three searches of 64 micro-batches")
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	placed := filepath.Join(dir, "p.json")
	code, text, errOut := runCLI(t, "plan", "--model", "../../testdata/models/llama7b.json", "--memory", "24e9", "--recompute", "--json", "--out", out, "--placement-out", placed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Schedule struct {
			Makespan int `json:"makespan"`
		} `json:"schedule"`
		MakespanTime float64 `json:"makespan_time"`
		Recompute    struct {
			Chosen          string  `json:"chosen"`
			PerInstanceTime float64 `json:"per_instance_time"`
			PolicyTime      float64 `json:"policy_time"`
			UniformTime     float64 `json:"uniform_time"`
			Recomputed      []int   `json:"recomputed_layers"`
			Layers          []int   `json:"layers"`
		} `json:"recompute"`
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatal(err)
	}
	r := got.Recompute
	if len(r.Recomputed) != 8 || len(r.Layers) != 8 || r.PerInstanceTime <= 0 || r.PolicyTime <= 0 || r.UniformTime <= 0 {
		t.Fatalf("recompute %+v", r)
	}
	want := r.PerInstanceTime
	if r.Chosen == "per-stage policy" {
		want = r.PolicyTime
	}
	if want != got.MakespanTime || min(r.PerInstanceTime, r.PolicyTime) != want {
		t.Errorf("chosen %s at %v, the plan's makespan %v", r.Chosen, want, got.MakespanTime)
	}
	s, err := schedule.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	if r.Chosen != "per-stage policy" {
		t.Fatalf("the per-instance decisions won (%v against %v): the export below needs the policy chosen", r.PerInstanceTime, r.PolicyTime)
	}
	p, err := placement.Load(placed)
	if err != nil {
		t.Fatal(err)
	}
	q := s.Placement.Clone()
	q.Capacities = nil // the schedule's placement holds the budgets, the file the model's blocks
	if !p.Equal(q) {
		t.Error("--placement-out is not the placement of the schedule written")
	}
	code, args, errOut := runCLI(t, "export", "--schedule", out, "--format", "megatron", "--megatron-layout", "Et*4|(t*4|)*6t*4L")
	if code != 0 || !strings.Contains(args, "--recompute-method block\n") || !strings.Contains(args, "--recompute-num-layers 3\n") {
		t.Errorf("megatron: exit %d %s\n%s", code, errOut, args)
	}
	split := filepath.Join(dir, "split.json")
	code, js, errOut := runCLI(t, "partition", "--model", "../../testdata/models/llama7b.json", "--memory", "24e9", "--json")
	if code != 0 {
		t.Fatalf("partition: exit %d %s", code, errOut)
	}
	if err := os.WriteFile(split, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	titan := filepath.Join(dir, "titan")
	if code, _, errOut := runCLI(t, "export", "--schedule", out, "--format", "torchtitan", "--out", titan); code != 2 || !strings.Contains(errOut, "--split") {
		t.Errorf("torchtitan without --split: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "export", "--schedule", out, "--format", "torchtitan", "--split", split, "--out", titan); code != 0 {
		t.Fatalf("torchtitan: exit %d %s", code, errOut)
	}
	py, err := os.ReadFile(filepath.Join(titan, "torchtitan_pipeline.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(py), `"layer0",`) || strings.Contains(string(py), `"layer3",`) || !strings.Contains(string(py), "config.activation_checkpoint = TesselRecompute.Config()") {
		t.Errorf("settings:\n%s", py)
	}
}
