package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tessel optimal --link-order: the schedule file records the order the
// solver chose and re-verifies; without channels the flag is a usage
// error.
func TestOptimalLinkOrder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.json")
	code, _, errOut := runCLI(t, "optimal", "--placement", "v-shape", "--devices", "2", "-n", "3", "--transfer-time", "2", "--channels", "--link-order", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"link_order": [`) {
		t.Errorf("no link_order in the schedule file:\n%s", data)
	}
	if code, _, errOut := runCLI(t, "verify", "--schedule", out); code != 0 {
		t.Errorf("verify: exit %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "optimal", "--placement", "v-shape", "--devices", "2", "-n", "3", "--link-order")
	if code != 2 || !strings.Contains(errOut, "--link-order needs links that carry one transfer at a time") {
		t.Errorf("without channels: exit %d: %s", code, errOut)
	}
}

// A schedule that records its own order of transfers on a link: the
// per-device programs send in the order producers start, so gen and
// simulate refuse it in one line with exit 2 rather than run another
// schedule.
func TestLinkOrderRefusedByPrograms(t *testing.T) {
	sched := filepath.Join("..", "..", "schedule", "testdata", "link-order.json")
	for _, args := range [][]string{
		{"simulate", "-s", sched},
		{"gen", "-s", sched, "--out", filepath.Join(t.TempDir(), "run")},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "link_order") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming link_order", args, code, out, errOut)
		}
	}
}
