package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/golden"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

const goldenSchedule = "../schedule/testdata/schedules/v-shape-1f1b.json"

const mShapeSchedule = "../schedule/testdata/schedules/m-shape-greedy.json"

func TestSimulateGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts deploy.SimulateOptions
	}{
		{"simulate-m-shape.txt", deploy.SimulateOptions{Schedule: mShapeSchedule, CommTime: 1}},
		{"simulate-m-shape.json", deploy.SimulateOptions{Schedule: mShapeSchedule, CommTime: 1, JSON: true}},
		{"simulate-v-shape-blocking.txt", deploy.SimulateOptions{Schedule: goldenSchedule, CommTime: 2, Blocking: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := deploy.Simulate(context.Background(), tc.opts, &out); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, out.Bytes())
		})
	}
}

// The claims behind the golden files: with no communication time the
// non-blocking programs take exactly the schedule's makespan; with some,
// non-blocking is faster than blocking (the paper's Fig. 17) and the
// speedup is the ratio of the makespans.
func TestSimulateClaims(t *testing.T) {
	for _, path := range []string{mShapeSchedule, goldenSchedule} {
		s, err := schedule.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, comm := range []int{0, 1} {
			var out bytes.Buffer
			if err := deploy.Simulate(context.Background(), deploy.SimulateOptions{Schedule: path, CommTime: comm, JSON: true}, &out); err != nil {
				t.Fatal(err)
			}
			var got runtimegen.Report
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Runs) != 2 || got.Runs[0].Mode != runtimegen.NonBlocking || got.Runs[1].Mode != runtimegen.Blocking {
				t.Fatalf("%s: runs %+v", path, got.Runs)
			}
			nb, bl := got.Runs[0].Makespan, got.Runs[1].Makespan
			if comm == 0 && nb != schedule.Makespan(s) {
				t.Errorf("%s: non-blocking makespan %d with no communication time, schedule's %d", path, nb, schedule.Makespan(s))
			}
			if comm == 1 && nb >= bl {
				t.Errorf("%s: non-blocking %d, blocking %d: want faster", path, nb, bl)
			}
			if got.Speedup == nil || *got.Speedup != math.Round(1e4*float64(bl)/float64(nb))/1e4 {
				t.Errorf("%s: speedup %v, makespans %d and %d", path, got.Speedup, nb, bl)
			}
		}
	}
}

// crossSchedule writes x-shape on two devices, one micro-batch: the two
// chains start together, one on each device, and cross.
func crossSchedule(t *testing.T, dir string) string {
	t.Helper()
	p, err := placement.Builtin("x-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	start := map[string]int{"fd0": 0, "fu0": 0, "fd1": 1, "fu1": 1, "bd1": 2, "bu1": 2, "bd0": 5, "bu0": 5}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}}
	for i, b := range p.Blocks {
		s.Instances = append(s.Instances, schedule.Instance{Block: i, Start: start[b.ID]})
	}
	return writeScheduleFile(t, filepath.Join(dir, "x-shape.json"), s)
}

// Programs edited into the naive order (device 1 sends its first output
// before receiving device 0's, as device 0 does) deadlock, and simulate
// names the cycle.
func TestSimulateProgramsDeadlock(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "gen")
	if err := deploy.Gen(context.Background(), deploy.GenOptions{Schedule: crossSchedule(t, dir), Out: out, Backend: "gloo", Blocking: true}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := deploy.Simulate(context.Background(), deploy.SimulateOptions{Programs: out, CommTime: 1}, &stdout); err != nil {
		t.Fatalf("generated programs: %v", err)
	}
	if !strings.Contains(stdout.String(), "blocking ") {
		t.Errorf("report lacks the blocking run:\n%s", stdout.String())
	}
	path := filepath.Join(out, runtimegen.FileName(1))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := runtimegen.ParseProgram(data)
	if err != nil {
		t.Fatal(err)
	}
	// Generated: recv fd0->fd1, compute fu0, send fu0->fu1 (device 0
	// sends first). Naive: compute fu0, send fu0->fu1, recv fd0->fd1.
	if p.Ops[0].Kind != runtimegen.Recv || p.Ops[2].Kind != runtimegen.Send {
		t.Fatalf("device 1 does not receive, compute, then send:\n%s", p.Text())
	}
	p.Ops[0], p.Ops[1], p.Ops[2] = p.Ops[1], p.Ops[2], p.Ops[0]
	if data, err = p.Marshal(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err = deploy.Simulate(context.Background(), deploy.SimulateOptions{Programs: out, CommTime: 1}, &bytes.Buffer{})
	want := "blocking programs: deadlock: device 0 at op 1 (send fd0->fd1@0 to 1 #0) waits for device 1; " +
		"device 1 at op 1 (send fu0->fu1@0 to 0 #1) waits for device 0"
	if err == nil || err.Error() != want || inputerr.Is(err) {
		t.Errorf("got %v\nwant %s (not a usage error)", err, want)
	}
}

func TestSimulateUsageErrors(t *testing.T) {
	dir := t.TempDir()
	invalid := filepath.Join(dir, "invalid.json")
	data, err := os.ReadFile(goldenSchedule)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte(`"start": 13}`), []byte(`"start": 12}`), 1)
	if bytes.Equal(bad, data) {
		t.Fatal("no start 13 in the golden schedule")
	}
	if err := os.WriteFile(invalid, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "rank0.json"), []byte(`{"placement": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts deploy.SimulateOptions
		err  string
	}{
		{"neither", deploy.SimulateOptions{CommTime: 1}, "give one of --schedule FILE and --programs DIR"},
		{"both", deploy.SimulateOptions{Schedule: goldenSchedule, Programs: dir}, "give one of"},
		{"negative comm", deploy.SimulateOptions{Schedule: goldenSchedule, CommTime: -1}, "--comm-time must be at least 0"},
		{"missing file", deploy.SimulateOptions{Schedule: filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{"invalid schedule", deploy.SimulateOptions{Schedule: invalid}, "invalid schedule"},
		{"no programs", deploy.SimulateOptions{Programs: dir}, "rank0.json: no such file"},
		{"broken program", deploy.SimulateOptions{Programs: broken}, "rank0.json: program:"},
		{"blocking programs", deploy.SimulateOptions{Programs: broken, Blocking: true}, "--blocking applies to --schedule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := deploy.Simulate(context.Background(), tc.opts, &bytes.Buffer{})
			if !inputerr.Is(err) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v, want a usage error with %q", err, tc.err)
			}
		})
	}
}

// writeScheduleFile writes s as a schedule file at path for a test.
func writeScheduleFile(t *testing.T, path string, s *schedule.Schedule) string {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestGenWrites(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	var stdout bytes.Buffer
	if err := deploy.Gen(context.Background(), deploy.GenOptions{Schedule: mShapeSchedule, Out: out, Backend: "gloo"}, &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "wrote "+out+": rank0.json … rank3.json (non-blocking, ") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"blocks.py", "launch.sh", "rank0.json", "rank1.json", "rank2.json", "rank3.json", "worker.py"}; !slices.Equal(names, want) {
		t.Errorf("wrote %v, want %v", names, want)
	}
	if fi, err := os.Stat(filepath.Join(out, "launch.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("launch.sh: %v, mode %v", err, fi.Mode())
	}
	// The programs are those of the schedule, and run.
	progs, err := runtimegen.LoadPrograms(out)
	if err != nil {
		t.Fatal(err)
	}
	if progs[0].Mode != runtimegen.NonBlocking || progs[0].Placement != "m-shape" {
		t.Errorf("programs for %s, %s", progs[0].Placement, progs[0].Mode)
	}
	if _, err := runtimegen.Simulate(progs, 1); err != nil {
		t.Error(err)
	}

	// Not into a directory with files, unless --force; then the same bytes.
	err = deploy.Gen(context.Background(), deploy.GenOptions{Schedule: mShapeSchedule, Out: out, Backend: "gloo"}, &bytes.Buffer{})
	if !inputerr.Is(err) || !strings.Contains(err.Error(), "is not empty (use --force") {
		t.Errorf("non-empty --out: got %v", err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "rank2.json"))
	if err := deploy.Gen(context.Background(), deploy.GenOptions{Schedule: mShapeSchedule, Out: out, Backend: "gloo", Force: true}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "rank2.json")); !bytes.Equal(before, after) {
		t.Error("a second gen wrote different programs")
	}

	// An empty directory is fine.
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := deploy.Gen(context.Background(), deploy.GenOptions{Schedule: goldenSchedule, Out: empty, Backend: "nccl", Blocking: true}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	launch, _ := os.ReadFile(filepath.Join(empty, "launch.sh"))
	if !strings.Contains(string(launch), "BACKEND=${BACKEND:-nccl}") {
		t.Errorf("launch.sh does not default to nccl:\n%s", launch)
	}
}

func TestGenUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// b1 differentiates nothing on its device: the workers cannot train it.
	p := &placement.Placement{Name: "odd", Devices: 2, Blocks: []placement.Block{
		{ID: "f0", Kind: placement.Forward, Devices: []int{0}, Time: 1, Memory: 1},
		{ID: "b1", Kind: placement.Backward, Devices: []int{1}, Time: 1, Memory: -1},
	}, Deps: []placement.Dep{{From: 0, To: 1}}}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Instances: []schedule.Instance{{Block: 0}, {Block: 1, Start: 1}}}
	odd := writeScheduleFile(t, filepath.Join(dir, "odd.json"), s)
	// An input block without its weight block: no worker computes f0's
	// weights' gradient.
	half := &placement.Placement{Name: "half", Devices: 1, Blocks: []placement.Block{
		{ID: "f0", Kind: placement.Forward, Devices: []int{0}, Time: 1, Memory: 1},
		{ID: "i0", Kind: placement.Input, Devices: []int{0}, Time: 1, Memory: -1},
	}, Deps: []placement.Dep{{From: 0, To: 1}}}
	halfFile := writeScheduleFile(t, filepath.Join(dir, "half.json"),
		&schedule.Schedule{Spec: spec.Spec{Placement: half, MicroBatches: 1}, Instances: []schedule.Instance{{Block: 0}, {Block: 1, Start: 1}}})
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		opts deploy.GenOptions
		err  string
	}{
		{"no schedule", deploy.GenOptions{Out: out, Backend: "gloo"}, "--schedule FILE is required"},
		{"no out", deploy.GenOptions{Schedule: goldenSchedule, Backend: "gloo"}, "--out DIR is required"},
		{"backend", deploy.GenOptions{Schedule: goldenSchedule, Out: out, Backend: "mpi"}, "--backend must be one of gloo, nccl"},
		{"out is a file", deploy.GenOptions{Schedule: goldenSchedule, Out: file, Backend: "gloo"}, "is not a directory"},
		{"missing schedule", deploy.GenOptions{Schedule: filepath.Join(dir, "none.json"), Out: out, Backend: "gloo"}, "no such file"},
		{"untrainable", deploy.GenOptions{Schedule: odd, Out: out, Backend: "gloo"}, `cannot train this placement: backward block "b1"`},
		{"half a split backward", deploy.GenOptions{Schedule: halfFile, Out: out, Backend: "gloo"}, `input block "i0": forward "f0" has no weight block`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := deploy.Gen(context.Background(), tc.opts, &bytes.Buffer{})
			if !inputerr.Is(err) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v, want a usage error with %q", err, tc.err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}
