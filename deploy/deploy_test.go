package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// oneFOneB writes 1F1B of v-shape on 2 devices, 4 micro-batches, to a
// schedule file in dir.
func oneFOneB(t testing.TB, dir string) (*schedule.Schedule, string) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 4))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "1f1b.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, path
}

// Export on stdout is torchcsv's table of the schedule; to a file it
// names what it wrote, and it never replaces a file without Force.
func TestExport(t *testing.T) {
	dir := t.TempDir()
	s, path := oneFOneB(t, dir)
	tab, err := torchcsv.Export(s)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := deploy.Export(context.Background(), deploy.ExportOptions{Schedule: path, Format: "torch-csv", Recv: "early", CommTime: 1}, &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), tab.Marshal()) {
		t.Errorf("stdout:\n%s\nwant torchcsv.Export's:\n%s", out.Bytes(), tab.Marshal())
	}
	csv := filepath.Join(dir, "s.csv")
	o := deploy.ExportOptions{Schedule: path, Format: "torch-csv", Recv: "early", CommTime: 1, Out: csv}
	out.Reset()
	if err := deploy.Export(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	if want := "wrote " + csv + ": 2 ranks, 2 stages, 4 micro-batches (PyTorch pipelining CSV, compute only)\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if got, _ := os.ReadFile(csv); !bytes.Equal(got, tab.Marshal()) {
		t.Errorf("%s holds %q", csv, got)
	}
	if err := deploy.Export(context.Background(), o, &out); err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), "exists (use --force") {
		t.Errorf("a second export over the file = %v, want bad input", err)
	}
}

// Every refusal is bad input, with the words the command prints.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	_, path := oneFOneB(t, dir)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"export without schedule", func() error { return deploy.Export(ctx, deploy.ExportOptions{Format: "torch-csv"}, nil) }, "export: --schedule FILE is required"},
		{"export format", func() error {
			return deploy.Export(ctx, deploy.ExportOptions{Schedule: path, Format: "xml"}, nil)
		}, `export: --format must be one of torch-csv, torch-csv-comms, torchtitan, megatron, got "xml"`},
		{"gen backend", func() error {
			return deploy.Gen(ctx, deploy.GenOptions{Schedule: path, Out: filepath.Join(dir, "g"), Backend: "mpi"}, nil)
		}, `--backend must be one of gloo, nccl, got "mpi"`},
		{"simulate neither", func() error { return deploy.Simulate(ctx, deploy.SimulateOptions{}, nil) }, "simulate: give one of --schedule FILE and --programs DIR"},
		{"import both", func() error {
			return deploy.Import(ctx, deploy.ImportOptions{TorchCSV: "a.csv", Megatron: "Et|tL"}, nil)
		}, "import: give one of --torch-csv and --megatron-layout"},
		{"invalid schedule file", func() error {
			return deploy.Simulate(ctx, deploy.SimulateOptions{Schedule: filepath.Join(dir, "none.json")}, nil)
		}, "none.json"},
	} {
		err := c.run()
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input containing %q", c.name, err, c.want)
		}
	}
}

// Simulate of a schedule file reports the schedule's makespan, and with
// transfers of no time its non-blocking programs end there.
func TestSimulate(t *testing.T) {
	s, path := oneFOneB(t, t.TempDir())
	var out bytes.Buffer
	if err := deploy.Simulate(context.Background(), deploy.SimulateOptions{Schedule: path, JSON: true}, &out); err != nil {
		t.Fatal(err)
	}
	var rep runtimegen.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := schedule.Makespan(s)
	if rep.ScheduleMakespan == nil || *rep.ScheduleMakespan != want {
		t.Fatalf("schedule_makespan %v, want %d", rep.ScheduleMakespan, want)
	}
	for _, r := range rep.Runs {
		if r.Mode == runtimegen.NonBlocking && r.Makespan != want {
			t.Errorf("non-blocking programs end at %d, the schedule at %d", r.Makespan, want)
		}
	}
}
