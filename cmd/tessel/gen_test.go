package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
)

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
