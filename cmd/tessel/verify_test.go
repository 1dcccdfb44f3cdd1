package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goldenSchedule = "../../schedule/testdata/schedules/v-shape-1f1b.json"

func TestRunVerify(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(goldenSchedule)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// b0^0 starts at 13 in 1F1B; at 12 it starts before b1^0 ends, and
	// no longer fits the repetend of period 4 with b0^1..b0^3.
	early := bytes.Replace(good, []byte(`{"block": "b0", "micro": 0, "start": 13}`), []byte(`{"block": "b0", "micro": 0, "start": 12}`), 1)
	if bytes.Equal(early, good) {
		t.Fatal("b0^0 not at 13 in the golden schedule")
	}
	tight := bytes.Replace(good, []byte(`"memory": 4,`), []byte(`"memory": 3,`), 1)
	tests := []struct {
		name   string
		path   string
		stdout string
		err    string
		usage  bool
	}{
		{"valid", goldenSchedule, "valid: v-shape, 8 micro-batches, makespan 44, bubble rate 27.27%, peak memory [4, 3, 2, 1] (budget 4)\n", "", false},
		{"dependency", file("early.json", early),
			"dependency b1 -> b0 broken for micro-batch 0: b1^0 ends at 13, b0^0 starts at 12\n" +
				"repetend iteration 1: b0^1 starts at 17, not 16 (b0^0 at 12 + 1·period 4)\n" +
				"repetend iteration 2: b0^2 starts at 21, not 20 (b0^0 at 12 + 2·period 4)\n" +
				"repetend iteration 3: b0^3 starts at 25, not 24 (b0^0 at 12 + 3·period 4)\n",
			"invalid schedule: 4 violations", false},
		// Device 0 holds 4 activations after each of f0^3..f0^7.
		{"memory", file("tight.json", tight),
			"memory on device 0 reaches 4 > budget 3 after f0^3 at time 3\n" +
				"memory on device 0 reaches 4 > budget 3 after f0^4 at time 16\n" +
				"memory on device 0 reaches 4 > budget 3 after f0^5 at time 20\n" +
				"memory on device 0 reaches 4 > budget 3 after f0^6 at time 24\n" +
				"memory on device 0 reaches 4 > budget 3 after f0^7 at time 28\n",
			"invalid schedule: 5 violations", false},
		{"missing file", filepath.Join(dir, "none.json"), "", "none.json: no such file or directory", true},
		{"bad file", file("bad.json", []byte(`{"memory": 1}`)), "", `bad.json: missing field "placement"`, true},
		{"no flag", "", "", "verify: --schedule FILE is required", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runVerify(context.Background(), verifyOptions{Schedule: tt.path}, &out)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("runVerify: %v", err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("runVerify error %v, want %q", err, tt.err)
				}
				var ue *usageError
				if errors.As(err, &ue) != tt.usage {
					t.Errorf("usage error = %v, want %v", !tt.usage, tt.usage)
				}
			}
			if out.String() != tt.stdout {
				t.Errorf("stdout\n%s\nwant\n%s", out.String(), tt.stdout)
			}
		})
	}
}

// Through the command line: exit codes 0, 1 and 2, one line on stderr.
func TestVerifyExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"tessel", "verify", "--schedule", goldenSchedule}, 0},
		{[]string{"tessel", "verify", "--schedule", "no-such.json"}, 2},
		{[]string{"tessel", "verify"}, 2},
		{[]string{"tessel", "verify", "--schedule", goldenSchedule, "extra"}, 2},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
		}
		if tc.code != 0 && strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line", tc.args, stderr.String())
		}
	}
}
