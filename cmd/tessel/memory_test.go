package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// memorySummary runs a search with --json and returns its summary.
func memorySummary(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, stdout, errOut := runCLI(t, append([]string{"search", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("tessel search %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, stdout)
	}
	if sum["valid"] != true {
		t.Fatalf("schedule not valid: %v", sum)
	}
	return sum
}

var vPlacement = []string{"--placement", "v-shape", "--devices", "4", "--chunks", "2", "--order", "v", "--split-backward", "-n", "16"}

// On the V placement one micro-batch holds 2 activations on device 0, so
// at memory 1 nothing fits without offload or recompute: one clear line
// naming the least budget (not N_R, which cannot help), exit 1 (Qi et
// al., "OptPipe", §1: only offloading trains where every other schedule
// runs out of memory).
func TestMemoryOneNeedsDecisions(t *testing.T) {
	code, stdout, errOut := runCLI(t, append([]string{"search", "--memory", "1"}, vPlacement...)...)
	if code != 1 || stdout != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "no schedule fits the memory budget") ||
		!strings.Contains(errOut, "the least budget any schedule needs is 2") || strings.Contains(errOut, "--nr") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line", code, stdout, errOut)
	}
}

func TestMemoryOneWithOffload(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for k := range 2 {
		out := filepath.Join(dir, "s"+string(rune('0'+k))+".json")
		sum := memorySummary(t, append([]string{"--memory", "1", "--offload", "--offload-time", "1", "--out", out}, vPlacement...)...)
		if off, _ := sum["offloaded"].(float64); off <= 0 {
			t.Errorf("offloaded %v, want > 0", sum["offloaded"])
		}
		if rec, ok := sum["recomputed"].(float64); !ok || rec != 0 {
			t.Errorf("recomputed %v, want 0", sum["recomputed"])
		}
		s, err := schedule.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(out)
		files = append(files, string(data))
	}
	if files[0] != files[1] {
		t.Errorf("two runs wrote different schedules")
	}
}

func TestMemoryOneWithRecompute(t *testing.T) {
	sum := memorySummary(t, append([]string{"--memory", "1", "--recompute"}, vPlacement...)...)
	if rec, _ := sum["recomputed"].(float64); rec <= 0 {
		t.Errorf("recomputed %v, want > 0", sum["recomputed"])
	}
}

// At memory 2 on the split v-shape, offloading lets more micro-batches be
// in flight than the budget holds: strictly faster than the best schedule
// that keeps every activation (OptPipe, §5: up to 50 % less idle time
// under the same memory limit).
func TestMemoryTwoOffloadFaster(t *testing.T) {
	testskip.Short(t, "the search without offload refines for seconds")
	args := []string{"--placement", "v-shape", "--devices", "4", "--split-backward", "--memory", "2", "-n", "16"}
	keep := memorySummary(t, args...)
	off := memorySummary(t, append(args, "--offload", "--offload-time", "1")...)
	rec := memorySummary(t, append(args, "--recompute")...)
	if _, ok := keep["offloaded"]; ok {
		t.Errorf("without --offload the summary reports offloaded: %v", keep)
	}
	if off["makespan"].(float64) >= keep["makespan"].(float64) {
		t.Errorf("with offload makespan %v, without %v: want strictly less", off["makespan"], keep["makespan"])
	}
	if r, _ := rec["recomputed"].(float64); r <= 0 {
		t.Errorf("with --recompute: recomputed %v", rec["recomputed"])
	}
}

func TestDecisionFlagsBad(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--offload-time", "2"}, "--offload-time needs --offload"},
		{[]string{"search", "--offload"}, "no block may be offloaded"},
		{[]string{"search", "--offload", "--offload-time", "-1"}, "--offload-time must be at least 1"},
		{[]string{"optimal", "--offload-time", "2"}, "--offload-time needs --offload"},
		{[]string{"compare", "--offload", "-n", "4"}, "no block may be offloaded"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// A schedule with offloads renders its host channels and re-verifies
// from its file.
func TestRenderDecisions(t *testing.T) {
	dir := t.TempDir()
	out, svg, trace := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.svg"), filepath.Join(dir, "s.trace.json")
	code, stdout, errOut := runCLI(t, "search", "--placement", "v-shape", "--split-backward", "--memory", "2", "-n", "8",
		"--offload", "--offload-time", "1", "--out", out, "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "render", "--schedule", out, "--format", "trace", "--out", trace); code != 0 {
		t.Fatalf("render: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"host 0", ">", "<", "decisions    "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, stdout)
		}
	}
	data, _ := os.ReadFile(svg)
	if !strings.Contains(string(data), `class="bar offload"`) || !strings.Contains(string(data), `class="bar reload"`) {
		t.Errorf("SVG lacks offload and reload bars")
	}
	data, _ = os.ReadFile(trace)
	if !strings.Contains(string(data), `"host channel 0"`) || !strings.Contains(string(data), `"offload f0^`) {
		t.Errorf("trace lacks the host channel")
	}
	if code, _, errOut := runCLI(t, "verify", "--schedule", out); code != 0 {
		t.Errorf("verify: exit %d: %s", code, errOut)
	}
}
