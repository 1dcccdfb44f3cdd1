package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/golden"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// runCLI runs tessel with args and returns its exit code and outputs.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"tessel"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPlacementsGolden(t *testing.T) {
	code, out, errOut := runCLI(t, "placements")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden.Check(t, "placements.txt", []byte(out))
}

// The JSON summary holds every field docs/formats.md lists, and the
// schedule file written beside it re-verifies and is the same on every
// run.
func TestSearchJSONAndOutFile(t *testing.T) {
	dir := t.TempDir()
	var files [][]byte
	for k := 0; k < 2; k++ {
		out := filepath.Join(dir, "s.json")
		args := []string{"search", "--placement", "v-shape", "--memory", "4", "--nr", "4", "--micro-batches", "16", "--json", "--out", out}
		if k > 0 {
			args = append(args, "--force")
		}
		code, stdout, errOut := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var sum map[string]any
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatalf("summary is not JSON: %v\n%s", err, stdout)
		}
		for _, f := range []string{"placement", "devices", "memory", "nr", "period", "repetend_bubble_rate", "micro_batches", "makespan", "bubble_rate", "peak_memory", "lower_bound", "valid", "seconds"} {
			if _, ok := sum[f]; !ok {
				t.Errorf("summary lacks %q", f)
			}
		}
		if sum["valid"] != true || sum["period"] != 4.0 || sum["repetend_bubble_rate"] != 0.0 {
			t.Errorf("summary %v", sum)
		}
		secs := sum["seconds"].(map[string]any)
		for _, f := range []string{"total", "repetend", "warmup", "cooldown"} {
			if _, ok := secs[f]; !ok {
				t.Errorf("seconds lacks %q", f)
			}
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		s, err := schedule.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		files = append(files, data)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two runs wrote different schedule files")
	}
}

func TestSearchText(t *testing.T) {
	code, out, errOut := runCLI(t, "search", "--placement", "k-shape", "--memory", "6", "--nr", "3", "--micro-batches", "32")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"repetend     N_R 3, period 8 (lower bound 8), repetend bubble rate 0.00%", "device 0", "schedule     32 micro-batches", "peak memory", "built by", "solver", "search time", "verified     yes", "[=="} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// N below N_R: the paper's search falls back to the time-optimal search,
// and says so; with the constructions, one of them meets the lower bound
// and no solver is needed.
func TestSearchFewMicroBatchesFallsBack(t *testing.T) {
	code, out, errOut := runCLI(t, "search", "--placement", "v-shape", "--memory", "4", "--nr", "4", "--micro-batches", "2", "--solver-only")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "fewer than N_R 4") || !strings.Contains(out, "verified     yes") {
		t.Errorf("output:\n%s", out)
	}
	code, out, errOut = runCLI(t, "search", "--placement", "v-shape", "--memory", "4", "--nr", "4", "--micro-batches", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "makespan 20 (lower bound 20, gap 0)") || !strings.Contains(out, "proven       yes: the makespan meets the lower bound") {
		t.Errorf("output:\n%s", out)
	}
}

// Reference: §III-B, Fig. 3 setting (V-shape, forward 1, backward 2).
func TestOptimalJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "optimal", "--placement", "v-shape", "--backward-time", "2", "-n", "6", "--memory", "16", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sum report.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Makespan != 27 || !sum.Proven || !sum.Valid || sum.MicroBatches != 6 {
		t.Errorf("summary %+v", sum)
	}
}

func TestBadInputIsOneLineAndExitTwo(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "taken.json")
	if err := os.WriteFile(existing, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"search", "--placement", "w-shape"},
		{"search", "--devices", "0"},
		{"search", "--method", "fast"},
		{"search", "--memory", "-1"},
		{"search", "--micro-batches", "0"},
		{"search", "--nope"},
		{"search", "--placement", "k-shape", "--devices", "3"},
		{"optimal", "--placement-file", "../../testdata/bad/cycle.json"},
		{"optimal", "--placement-file", "no/such/file.json"},
		{"optimal", "--forward-time", "0"},
		{"optimal", "--out", existing},
		{"search", "extra-argument"},
		{"search", "--input-time", "2"},
		{"search", "--split-backward", "--backward-time", "2"},
		{"search", "--placement", "dualpipe", "--backward-time", "2"},
		{"search", "--split-backward", "--weight-time", "0"},
		{"search", "--chunks", "0"},
		{"search", "--chunks", "2", "--order", "zigzag"},
		{"search", "--order", "v"},
		{"search", "--placement", "k-shape", "--chunks", "2"},
		{"placements", "--split-backward", "--backward-time", "2"},
		{"placements", "--chunks", "-1"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errOut)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tessel: ") {
			t.Errorf("%v: stderr is not one line: %q", args, errOut)
		}
		if out != "" {
			t.Errorf("%v: printed %q on stdout", args, out)
		}
	}
	if data, _ := os.ReadFile(existing); string(data) != "mine" {
		t.Error("an existing --out file was overwritten")
	}
}

// A search whose memory budget admits no repetend says what to change.
func TestSearchNoRepetend(t *testing.T) {
	code, _, errOut := runCLI(t, "search", "--placement", "v-shape", "--memory", "0", "--nr", "1", "-n", "4", "--placement-file", "../../testdata/placements/v-shape.json", "--memory", "1")
	if code == 0 {
		return // a repetend of one micro-batch fits in memory 1: fine
	}
	if !strings.Contains(errOut, "--memory") {
		t.Errorf("stderr %q does not say what to raise", errOut)
	}
}

// Every bad placement file makes tessel optimal print one line naming the
// problem and exit 2, never a panic (issue: bad input).
func TestEveryBadPlacementFile(t *testing.T) {
	files, err := filepath.Glob("../../testdata/bad/*.json")
	if err != nil || len(files) < 8 {
		t.Fatalf("%d bad files: %v", len(files), err)
	}
	for _, f := range files {
		code, out, errOut := runCLI(t, "optimal", "--placement-file", f)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q", f, code, out)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, filepath.Base(f)) || strings.Contains(errOut, "panic") {
			t.Errorf("%s: stderr %q", f, errOut)
		}
	}
}

// The "otherwise" line names the best other start by makespan: ZB-H1 at
// 27 on the split v-shape, not the first listed (a list schedule at 29).
func TestSearchRunnerUpLine(t *testing.T) {
	code, out, errOut := runCLI(t, "search", "-p", "v-shape", "--split-backward", "-d", "4", "-n", "8", "--memory", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "otherwise: baseline zb-h1 (makespan 27)"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// tessel optimal says what proves its lower bound: for the v-shape under
// memory 3, solver calls (32), not the relaxations (28).
func TestOptimalBoundLine(t *testing.T) {
	code, out, errOut := runCLI(t, "optimal", "-p", "v-shape", "--memory", "3", "-n", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "lower bound  32 (proven by solver calls that found no shorter schedule; the relaxations and the memory budget give 28)"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// The summaries report the steady state of the schedule returned: on the
// m-shape, 8 devices, memory 8, 128 micro-batches, a list schedule without
// a bubble in its steady state (period 6), while the repetend found (period
// 8, 25%) is reported as not used.
func TestSearchReportsTheSchedulesSteadyState(t *testing.T) {
	testskip.Short(t, "two searches of 128 micro-batches on 8 devices")
	args := []string{"search", "--placement", "m-shape", "--devices", "8", "--memory", "8", "-n", "128", "--effort", "1"}
	code, out, errOut := runCLI(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sum report.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	st := sum.SteadyState
	if st == nil || st.BubbleRate != 0 || st.Period != 6 || st.PerPeriod != 1 {
		t.Errorf("steady state %+v, want period 6 without bubbles", st)
	}
	if sum.RepetendUsed == nil || *sum.RepetendUsed {
		t.Errorf("repetend_used %v, want false (period %d)", sum.RepetendUsed, sum.Period)
	}
	code, out, errOut = runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"repetend     found, not used: N_R ", "steady state period 6, N_R ", "bubble rate 0.00% over 3 periodic stretches"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// tessel plan on the GPT-like model says one N_R: the chart's repetend
// line, the repetend and the steady state agree (they printed N_R 4 and
// nr 5 for one schedule).
func TestPlanOneNR(t *testing.T) {
	code, out, errOut := runCLI(t, "plan", "--model", gptLike)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	found := regexp.MustCompile(`(?:N_R|nr) (\d+)`).FindAllStringSubmatch(out, -1)
	if len(found) < 2 {
		t.Fatalf("fewer than two N_R in:\n%s", out)
	}
	for _, f := range found[1:] {
		if f[1] != found[0][1] {
			t.Errorf("N_R %s and %s in one report:\n%s", found[0][1], f[1], out)
		}
	}
}
