package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

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
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "is not empty (use --force") {
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
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v, want a usage error with %q", err, tc.err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// The flags reach the options: parse real command lines.
func TestSimulateGenFlags(t *testing.T) {
	var stdout bytes.Buffer
	app := &cli.App{Name: "tessel", Writer: &stdout, Commands: []*cli.Command{simulateCommand(), genCommand()},
		ExitErrHandler: func(*cli.Context, error) {}}
	if err := app.Run([]string{"tessel", "simulate", "--schedule", goldenSchedule, "--comm-time", "0", "--blocking", "--json"}); err != nil {
		t.Fatal(err)
	}
	var got runtimegen.Report
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if got.CommTime != 0 || len(got.Runs) != 1 || got.Runs[0].Mode != runtimegen.Blocking {
		t.Errorf("simulate flags not applied: %+v", got)
	}
	out := filepath.Join(t.TempDir(), "run")
	if err := app.Run([]string{"tessel", "gen", "-s", goldenSchedule, "-o", out, "--backend", "nccl", "--blocking"}); err != nil {
		t.Fatal(err)
	}
	progs, err := runtimegen.LoadPrograms(out)
	if err != nil {
		t.Fatal(err)
	}
	launch, _ := os.ReadFile(filepath.Join(out, "launch.sh"))
	if progs[0].Mode != runtimegen.Blocking || !strings.Contains(string(launch), "nccl") {
		t.Errorf("gen flags not applied: mode %s\n%s", progs[0].Mode, launch)
	}
	for _, args := range [][]string{{"tessel", "simulate", "extra"}, {"tessel", "gen", "extra"}} {
		err := app.Run(args)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}

// A schedule of a split backward (input and weight blocks, V placement)
// generates programs in which every weight block runs after its input
// block on the same device.
func TestGenSplitBackward(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "v.json")
	if code, _, errOut := runCLI(t, "search", "--placement-file", "../../testdata/placements/v-chunks.json", "--memory", "8", "-n", "4", "--out", sched); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	out := filepath.Join(dir, "run")
	if err := deploy.Gen(context.Background(), deploy.GenOptions{Schedule: sched, Out: out, Backend: "gloo"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	progs, err := runtimegen.LoadPrograms(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		seen := map[string]bool{}
		for _, o := range p.Ops {
			if o.Kind != runtimegen.Compute {
				continue
			}
			b := p.Block(o.Block)
			if b.Kind == placement.Weight && !seen[fmt.Sprintf("i%s@%d", o.Block[1:], o.Micro)] {
				t.Errorf("device %d: %s@%d before its input block", p.Device, o.Block, o.Micro)
			}
			if b.Kind != placement.Forward && b.Forward != "f"+o.Block[1:] {
				t.Errorf("device %d: %s differentiates %q, want f%s", p.Device, o.Block, b.Forward, o.Block[1:])
			}
			seen[fmt.Sprintf("%s@%d", o.Block, o.Micro)] = true
		}
	}
}
