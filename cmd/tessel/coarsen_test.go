package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// gen-dag writes the same bytes for the same flags, and a placement and a
// cluster that search reads.
func TestGenDag(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for k := range 2 {
		out := filepath.Join(dir, "dag"+string(rune('a'+k))+".json")
		code, stdout, stderr := runCLI(t, "gen-dag", "--nodes", "40", "--seed", "3", "--out", out, "--cluster-out", filepath.Join(dir, "cl.json"), "--force")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.HasPrefix(stdout, "dag-40-s3: 40 operators, ") {
			t.Fatalf("stdout %q", stdout)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(data))
	}
	if files[0] != files[1] {
		t.Fatal("the same flags wrote different placements")
	}
	for _, bad := range [][]string{
		{"gen-dag"},
		{"gen-dag", "--out", "-", "--nodes", "0"},
		{"gen-dag", "--out", "-", "--per-unit", "-1"},
		{"gen-dag", "--out", "-", "extra"},
	} {
		if code, _, stderr := runCLI(t, bad...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, stderr)
		}
	}
}

// She et al. §IV then §V-B, small: search --coarsen on a 60-operator DAG
// coarsens, solves, expands and writes a schedule that re-verifies, and
// is never worse than HEFT's; --coarsen on a pinned placement or below -1
// is a usage error.
func TestSearchCoarsen(t *testing.T) {
	dir := t.TempDir()
	dag, cl, out := filepath.Join(dir, "dag.json"), filepath.Join(dir, "cl.json"), filepath.Join(dir, "s.json")
	if code, _, stderr := runCLI(t, "gen-dag", "--nodes", "60", "--out", dag, "--cluster-out", cl); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "search", "--placement-file", dag, "--cluster", cl, "-n", "1", "--coarsen", "12", "--json", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum report.CoarsenSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Blocks != 60 || sum.CoarseBlocks != 12 || !sum.Valid || sum.Makespan > sum.HEFT || sum.Makespan > sum.Expanded {
		t.Fatalf("summary %+v", sum)
	}
	s, err := schedule.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	if schedule.Makespan(s) != sum.Makespan {
		t.Fatalf("file makespan %d, summary %d", schedule.Makespan(s), sum.Makespan)
	}
	for _, bad := range [][]string{
		{"search", "--placement", "v-shape", "--coarsen", "4", "-n", "2"},
		{"search", "--placement-file", dag, "--coarsen", "-2", "-n", "1"},
	} {
		if code, _, stderr := runCLI(t, bad...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, stderr)
		}
	}
}
