package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The latency budget through the command line (the Tessel paper's §VI-D):
// a search under it writes a schedule that records it, verify re-checks
// it (a tighter one fails, naming the micro-batch), and a budget below the
// critical path is one line and exit 1.
func TestLatencyCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	ctx := context.Background()
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // a line stdout must hold
		stderr string
	}{
		{[]string{"tessel", "search", "--placement", "v-shape", "--infer", "-n", "8", "--latency-budget", "4", "--out", out}, 0,
			"latency      max 4, mean 4, throughput 1 per time unit (budget 4)\n", ""},
		{[]string{"tessel", "verify", "--schedule", out}, 0,
			"valid: v-shape-infer, 8 micro-batches, makespan 11, bubble rate 27.27%, peak memory [0, 0, 0, 0] (budget unlimited), latency max 4, mean 4, throughput 1 per time unit (budget 4)\n", ""},
		{[]string{"tessel", "search", "--placement", "v-shape", "--infer", "-n", "8", "--latency-budget", "3"}, 1, "",
			"tessel: search: latency budget 3 is below the critical path 4 of placement \"v-shape-infer\": no schedule meets it\n"},
		{[]string{"tessel", "optimal", "--placement", "v-shape", "--infer", "-n", "4", "--latency-budget", "3"}, 1, "",
			"tessel: search: latency budget 3 is below the critical path 4 of placement \"v-shape-infer\": no schedule meets it\n"},
		{[]string{"tessel", "search", "--placement", "v-shape", "--infer", "-n", "8", "--latency-budget", "-1"}, 2, "", ""},
		{[]string{"tessel", "sweep", "--tp-efficiency", "0.5"}, 2, "", "tessel: sweep: --tp-efficiency needs --latency\n"},
		{[]string{"tessel", "sweep", "--latency-budget", "4,5"}, 2, "", "tessel: sweep: --latency-budget: want one number at least 0 without --latency, got \"4,5\"\n"},
		{[]string{"tessel", "sweep", "--placement", "v-shape", "--latency-budget", "4"}, 1, "", "tessel: sweep: latency budget 4 is below the critical path 16 of placement \"v-shape\": no schedule meets it\n"},
		{[]string{"tessel", "compare", "--placement", "v-shape", "-n", "4", "--tp-efficiency", "0.5"}, 2, "", ""},
		{[]string{"tessel", "compare", "--placement", "v-shape", "--infer", "-n", "4", "--tp-efficiency", "1.5"}, 2, "", ""},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, tc.args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
			continue
		}
		if tc.stdout != "" && !strings.Contains(stdout.String(), tc.stdout) {
			t.Errorf("%v: stdout\n%s\nwant a line %q", tc.args, stdout.String(), tc.stdout)
		}
		if tc.stderr != "" && stderr.String() != tc.stderr {
			t.Errorf("%v: stderr %q, want %q", tc.args, stderr.String(), tc.stderr)
		}
		if tc.code != 0 && strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line", tc.args, stderr.String())
		}
	}
	// A tighter budget in the file: verify names the micro-batch.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Stall micro-batch 7's last stage by one: its latency becomes 5.
	var stdout, stderr bytes.Buffer
	bad := bytes.Replace(data, []byte(`{"block": "f3", "micro": 7, "start": 10}`), []byte(`{"block": "f3", "micro": 7, "start": 11}`), 1)
	if bytes.Equal(bad, data) {
		t.Fatalf("f3^7 not at 10 in\n%s", data)
	}
	path := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run(ctx, []string{"tessel", "verify", "--schedule", path}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stdout.String(), "latency of micro-batch 7 is 5 > budget 4: f0^7 starts at 7, f3^7 ends at 12") {
		t.Errorf("verify of a schedule over its budget: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
