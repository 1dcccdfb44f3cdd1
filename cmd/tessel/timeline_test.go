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

// tessel replan --timeline --model: a device that leaves or joins means
// a new speed-aware split of the model onto the devices there (Wu et al.,
// §3, S3), from the old stage boundaries; each step verifies; the last
// schedule, written, verifies on its own; bad combinations exit 2 with
// one line.
func TestReplanTimelineModel(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join("..", "..", "testdata", "hetero", "chain-12.json")
	cl := filepath.Join("..", "..", "testdata", "hetero", "four-one-slow.json")
	p, pc, old, out := filepath.Join(dir, "p.json"), filepath.Join(dir, "pc.json"), filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	if code, _, errOut := runCLI(t, "partition", "--model", model, "--cluster", cl, "--out", p, "--cluster-out", pc); code != 0 {
		t.Fatalf("partition: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "search", "--placement-file", p, "--cluster", pc, "-n", "16", "--out", old); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	tl := filepath.Join("..", "..", "testdata", "timelines", "model-leave-join.json")
	code, stdout, errOut := runCLI(t, "replan", "--schedule", old, "--model", model, "--cluster", cl, "--timeline", tl, "--json", "--out", out)
	if code != 0 {
		t.Fatalf("replan: exit %d: %s", code, errOut)
	}
	var rep timeline.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	want := []int{3, 3, 4}
	for k, st := range rep.Steps {
		if !st.Valid || st.Fresh == nil || st.Devices != want[k] || (k != 1 && st.Repartition == "") {
			t.Errorf("step %d: %+v", k+1, st)
		}
	}
	if code, vout, errOut := runCLI(t, "verify", "--schedule", out); code != 0 || !strings.Contains(vout, "("+itoa(rep.Steps[2].Makespan)+" steps of ") {
		t.Errorf("verify: exit %d %q %s", code, vout, errOut)
	}
	gpt := filepath.Join("..", "..", "testdata", "hetero", "gpt-34.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", model, "--cluster", cl}, "--model goes with --timeline"},
		{[]string{"--model", model, "--timeline", tl}, "--model needs --cluster FILE"},
		{[]string{"--model", gpt, "--cluster", cl, "--timeline", tl}, "not the model's split on the cluster"},
		{[]string{"--model", filepath.Join(dir, "none.json"), "--cluster", cl, "--timeline", tl}, "no such file"},
	} {
		code, _, errOut := runCLI(t, append([]string{"replan", "--schedule", old, "--no-fresh"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
