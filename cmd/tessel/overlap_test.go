package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// --overlap-time on the command line: a search that pairs, its file
// verified and exported with OVERLAP_F_B, imported back as pairs; the
// commands that cannot take pairs refuse in one line with exit 2.
func TestOverlapCLI(t *testing.T) {
	dir := t.TempDir()
	sched, csv := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.csv")
	args := []string{"-p", "v-shape", "--chunks", "2", "--order", "v", "--split-backward", "-n", "8", "--overlap-time", "2"}
	if code, _, errOut := runCLI(t, append([]string{"search", "--out", sched}, args...)...); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, "verify", "-s", sched); code != 0 || !strings.Contains(out, "makespan 44") {
		t.Fatalf("verify: exit %d: %s%s", code, out, errOut)
	}
	code, _, errOut := runCLI(t, "export", "-s", sched, "--format", "torch-csv", "--out", csv)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "import", "--torch-csv", csv, "--overlap-time", "2")
	if code != 0 || !strings.Contains(out, "OVERLAP_F_B action(s) imported as overlapped pairs") || !strings.Contains(out, "makespan 44") {
		t.Errorf("import: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"search", "-p", "v-shape", "--overlap-time", "0"}, `--overlap-time: overlap time "0": want a time ≥ 1`},
		{[]string{"search", "-p", "v-shape", "--overlap-time", "fastx"}, `factor of F + B`},
		{[]string{"optimal", "-p", "v-shape", "-n", "2", "--overlap-time", "3"}, "the time-optimal search does not pair"},
		{[]string{"import", "--torch-csv", csv, "--overlap-time", "-1"}, "--overlap-time"},
		{[]string{"simulate", "-s", sched}, "overlaps 27 forward-backward pairs"},
		{[]string{"gen", "-s", sched, "--out", filepath.Join(dir, "run")}, "overlaps 27 forward-backward pairs"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.err)
		}
	}
}
