package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/encode/cnf"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
	"github.com/tessel-pp/tessel/z3"
)

// tessel optimal --cnf writes the formula, a SAT solver answers it (here
// Z3's, through the format every solver prints), and --answer reads the
// answer back: at the optimum a verified schedule, written with --out;
// one step below, the lower bound.
func TestOptimalCNFRoundTrip(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"optimal", "-p", "v-shape", "-d", "2", "--split-backward", "-n", "3", "-m", "1", "--offload", "--offload-time", "1"}
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.Spec{Placement: p.WithOffload(1), MicroBatches: 3, Memory: 1, Allowed: spec.Decisions{Offload: true}}
	for _, tc := range []struct {
		makespan int
		want     []string
	}{
		{13, []string{"answer       satisfiable", "makespan 13", "verified     yes"}},
		{12, []string{"answer       unsatisfiable", "no schedule ends by 12", "lower bound  13"}},
	} {
		formula := filepath.Join(dir, fmt.Sprintf("f%d.cnf", tc.makespan))
		args := append(flags, "--makespan", fmt.Sprint(tc.makespan))
		code, out, errOut := runCLI(t, append(args, "--cnf", formula)...)
		if code != 0 || !strings.Contains(out, "written to   "+formula) {
			t.Fatalf("--cnf: exit %d, %s%s", code, out, errOut)
		}
		data, err := os.ReadFile(formula)
		if err != nil || !strings.HasPrefix(string(data), "c tessel: v-shape-split, 3 micro-batches, memory 1, makespan at most") {
			t.Fatalf("formula file: %v, %.80q", err, data)
		}
		f, err := cnf.Encode(context.Background(), sp, tc.makespan)
		if err != nil {
			t.Fatal(err)
		}
		a, err := f.Solve(context.Background(), nil, z3.SolverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		if err := cnf.WriteAnswer(&text, a); err != nil {
			t.Fatal(err)
		}
		answer := filepath.Join(dir, fmt.Sprintf("a%d.txt", tc.makespan))
		if err := os.WriteFile(answer, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		sched := filepath.Join(dir, fmt.Sprintf("s%d.json", tc.makespan))
		code, out, errOut = runCLI(t, append(args, "--answer", answer, "--out", sched)...)
		if code != 0 {
			t.Fatalf("--answer: exit %d, %s", code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("makespan %d: no %q in\n%s", tc.makespan, w, out)
			}
		}
		if a.Status == cnf.Satisfiable {
			s, err := schedule.Load(sched)
			if err != nil {
				t.Fatal(err)
			}
			if err := verify.Schedule(s); err != nil || schedule.Makespan(s) != tc.makespan {
				t.Errorf("written schedule: %v, makespan %d", err, schedule.Makespan(s))
			}
		}
	}
}

func TestOptimalCNFBad(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.cnf")
	if err := os.WriteFile(exists, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.txt")
	if err := os.WriteFile(other, []byte("s SATISFIABLE\nv 1 -2 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown.txt")
	if err := os.WriteFile(unknown, []byte("s UNKNOWN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"optimal", "-p", "v-shape", "-d", "2", "--split-backward", "-n", "3", "-m", "1"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--cnf", filepath.Join(dir, "f.cnf")}, 2, "need --makespan"},
		{[]string{"--cnf", filepath.Join(dir, "j.cnf"), "--makespan", "20", "--out", filepath.Join(dir, "s.json")}, 2, "go with --answer"},
		{[]string{"--cnf", exists, "--makespan", "20"}, 2, "exists"},
		{[]string{"--cnf", filepath.Join(dir, "g.cnf"), "--answer", other, "--makespan", "20"}, 2, "give one"},
		{[]string{"--answer", other, "--makespan", "20"}, 2, "another formula"},
		{[]string{"--answer", filepath.Join(dir, "missing.txt"), "--makespan", "20"}, 2, "no such file"},
		{[]string{"--answer", unknown, "--makespan", "20"}, 1, "no verdict"},
		{[]string{"--cnf", filepath.Join(dir, "h.cnf"), "--makespan", "3"}, 2, "critical path"},
		{[]string{"--cnf", filepath.Join(dir, "i.cnf"), "--makespan", "20", "--latency-budget", "12"}, 2, "latency budget"},
	} {
		code, _, errOut := runCLI(t, append(base, tc.args...)...)
		if code != tc.code || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	// A model's placement, timed in fine steps, is refused by its unit.
	code, _, errOut := runCLI(t, "optimal", "--placement-file", filepath.Join("..", "..", "testdata", "placements", "llama7b-8x80.json"), "-n", "4", "--makespan", "100", "--cnf", filepath.Join(dir, "u.cnf"))
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "timed in whole steps") || !strings.Contains(errOut, "its critical path") {
		t.Errorf("units: exit %d, stderr %q", code, errOut)
	}
	if data, _ := os.ReadFile(exists); string(data) != "mine" {
		t.Errorf("the file that existed holds %q", data)
	}
}
