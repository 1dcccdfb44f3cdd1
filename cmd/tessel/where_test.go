package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const whereFile = "../../testdata/placements/where-branches.json"

// A placement with candidates searches, writes a schedule file that
// records the choice, and every command reads that file as a pinned
// placement; verify checks the choice is a candidate (She et al.,
// "Automatic Operator-level Parallelism Planning for Distributed Deep
// Learning – A Mixed-Integer Programming Approach", §III).
func TestWhereRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "s.json")
	tests := []struct {
		name string
		args []string
	}{
		{"search", []string{"search", "--placement-file", whereFile, "-n", "3", "--transfer-time", "1", "--out", sched, "--force"}},
		{"search period", []string{"search", "--placement-file", whereFile, "-n", "3", "--transfer-time", "1", "--objective", "period"}},
		{"optimal", []string{"optimal", "--placement-file", whereFile, "-n", "2", "--transfer-time", "1"}},
		{"compare", []string{"compare", "--placement-file", whereFile, "-n", "3", "--transfer-time", "1"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, tt.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, code, errOut)
		}
		if tt.name != "compare" && !strings.Contains(out, "devices chosen: ") {
			t.Errorf("%s: no \"devices chosen\" line:\n%s", tt.name, out)
		}
	}
	data, err := os.ReadFile(sched)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"chosen": [`) || !strings.Contains(string(data), `"cluster": `) {
		t.Fatalf("the schedule file does not record the choice on its cluster:\n%s", data)
	}
	for _, args := range [][]string{
		{"verify", "--schedule", sched},
		{"render", "--schedule", sched},
		{"simulate", "--schedule", sched},
		{"gen", "--schedule", sched, "--out", filepath.Join(dir, "gen")},
	} {
		if code, _, errOut := runCLI(t, args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
	// A choice outside the candidates fails to load: one line, exit 2.
	bad := filepath.Join(dir, "bad.json")
	tampered := strings.Replace(string(data), `"candidates": [[0], [1]], "chosen": [0]`, `"candidates": [[0], [1]], "chosen": [0, 1]`, 1)
	if tampered == string(data) {
		t.Fatal("no block to tamper with")
	}
	if err := os.WriteFile(bad, []byte(tampered), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "verify", "--schedule", bad)
	if code != 2 || !strings.Contains(errOut, "are not among the candidates") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("tampered choice: exit %d: %q", code, errOut)
	}
}

// Commands that do not choose devices refuse a placement with blocks
// still to choose, and a bad --objective is a usage error.
func TestWhereRefused(t *testing.T) {
	for _, args := range [][]string{
		{"sweep", "--placement-file", whereFile},
		{"search", "--placement-file", whereFile, "--objective", "speed"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// A schedule file that records a choice exports to PyTorch's CSV as a
// pinned one does (one candidate each here: the CSV needs a chain of
// stages, which not every choice is).
func TestWhereExport(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain.json")
	data := `{
  "name": "chain",
  "devices": 2,
  "blocks": [
    {"id": "f0", "kind": "forward", "candidates": [[0]], "time": 1, "memory": 1},
    {"id": "f1", "kind": "forward", "candidates": [[1]], "time": 1, "memory": 1},
    {"id": "b1", "kind": "backward", "candidates": [[1]], "time": 2, "memory": -1},
    {"id": "b0", "kind": "backward", "devices": [0], "time": 2, "memory": -1}
  ],
  "deps": [["f0", "f1"], ["f1", "b1"], ["b1", "b0"]]
}
`
	if err := os.WriteFile(chain, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	sched := filepath.Join(dir, "s.json")
	if code, _, errOut := runCLI(t, "search", "--placement-file", chain, "-n", "4", "--transfer-time", "1", "--out", sched); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, "export", "--schedule", sched); code != 0 || out == "" {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
}
