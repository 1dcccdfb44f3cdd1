package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/timeline"
)

// tessel replan --timeline: every step of a network that keeps changing
// (Wu et al., "Rethinking Dynamic Networks and Heterogeneous Computing
// with Automatic Parallelization", S3: a link slows, devices leave, new
// ones join) is replanned from the last and verified; the last schedule
// is written and verifies on its own; bad timelines exit 2 with one line.
func TestReplanTimeline(t *testing.T) {
	dir := t.TempDir()
	old, out := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	if code, _, errOut := runCLI(t, "search", "--placement", "m-shape", "--devices", "8", "--memory", "8", "-n", "8", "--transfer-time", "1", "--out", old); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	tl := filepath.Join("..", "..", "testdata", "timelines", "node-fails.json")
	code, stdout, errOut := runCLI(t, "replan", "--schedule", old, "--timeline", tl, "--json", "--out", out, "--no-fresh")
	if code != 0 {
		t.Fatalf("replan: exit %d: %s", code, errOut)
	}
	var rep timeline.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var devices []int
	for _, st := range rep.Steps {
		if !st.Valid || st.Fresh != nil {
			t.Errorf("step %+v", st)
		}
		devices = append(devices, st.Devices)
	}
	if len(devices) != 3 || devices[0] != 8 || devices[1] != 4 || devices[2] != 6 {
		t.Errorf("devices %v, want [8 4 6]", devices)
	}
	if code, vout, errOut := runCLI(t, "verify", "--schedule", out); code != 0 || !strings.Contains(vout, "makespan "+itoa(rep.Steps[2].Makespan)) {
		t.Errorf("verify: exit %d %q %s", code, vout, errOut)
	}
	code, text, errOut := runCLI(t, "replan", "--schedule", old, "--timeline", tl, "--no-fresh")
	if code != 0 || !strings.Contains(text, "devices 4, 5, 6, 7 leave (m-shape on 4 devices)") || !strings.Contains(text, "verified      yes (every step)") {
		t.Errorf("text: exit %d %s%s", code, text, errOut)
	}
	gone := filepath.Join(dir, "gone.json")
	if err := os.WriteFile(gone, []byte(`{"changes": [{"at": 5, "leave": [0]}, {"at": 9, "leave": [7]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join("..", "..", "testdata", "bad", "timelines", "out-of-order.json"), "changes[1]: iteration 2 is before"},
		{gone, "timeline: step 2 (iteration 9): device 7 leaves: leave[0]: device 7 out of range 0..6"},
		{filepath.Join(dir, "missing.json"), "no such file"},
	} {
		code, _, errOut := runCLI(t, "replan", "--schedule", old, "--timeline", c.file, "--no-fresh")
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%s: exit %d %q, want 2 and %q", c.file, code, errOut, c.want)
		}
	}
}
