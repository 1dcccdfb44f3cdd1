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
