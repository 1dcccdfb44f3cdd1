package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// tessel export writes exactly the library's CSV, to stdout or a file it
// never overwrites without --force, and refuses what is no chain of
// stages with one line and exit 2.
func TestExportCommand(t *testing.T) {
	s, err := schedule.Load(goldenSchedule)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := torchcsv.Export(s)
	if err != nil {
		t.Fatal(err)
	}
	want := tab.Marshal()
	code, out, errOut := runCLI(t, "export", "--schedule", goldenSchedule)
	if code != 0 || out != string(want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the library's CSV %q", code, out, errOut, want)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.csv")
	if code, out, errOut := runCLI(t, "export", "-s", goldenSchedule, "--format", "torch-csv", "--out", path); code != 0 ||
		!strings.HasPrefix(out, "wrote "+path+": 4 ranks, 4 stages, ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("%s differs from stdout's CSV", path)
	}
	if err := os.WriteFile(path, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := baseline.GPipe(spec.New(m, 4))
	if err != nil {
		t.Fatal(err)
	}
	mpath := writeScheduleFile(t, filepath.Join(dir, "m.json"), ms)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"export", "-s", goldenSchedule, "--out", path}, "exists (use --force to overwrite it)"},
		{[]string{"export"}, "--schedule FILE is required"},
		{[]string{"export", "-s", goldenSchedule, "--format", "json"}, `--format must be one of torch-csv, torch-csv-comms, torchtitan, megatron, got "json"`},
		{[]string{"export", "-s", mpath}, `cannot export to PyTorch's CSV: block "fs" runs on devices [0 1 2 3], a group`},
		{[]string{"export", "-s", "no-such.json"}, "no-such.json"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != "mine" {
		t.Error("the user's file was overwritten without --force")
	}
	if code, _, errOut := runCLI(t, "export", "-s", goldenSchedule, "--out", path, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Error("--force did not replace the file")
	}
}

// The CSV workflow both ways through the command line: export a schedule,
// import the CSV, and the imported schedule file verifies, keeps every
// device's order and exports to the same CSV.
func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "pp.csv")
	if code, _, errOut := runCLI(t, "export", "-s", goldenSchedule, "--out", csv); code != 0 {
		t.Fatal(errOut)
	}
	sched, plc := filepath.Join(dir, "s.json"), filepath.Join(dir, "p.json")
	code, out, errOut := runCLI(t, "import", "--torch-csv", csv, "--forward-time", "1", "--backward-time", "3",
		"--memory", "4", "--out", sched, "--placement-out", plc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	orig, err := schedule.Load(goldenSchedule)
	if err != nil {
		t.Fatal(err)
	}
	want := "imported " + csv + ": 4 ranks, 4 stages, 8 micro-batches, makespan " // same times: same makespan
	if m := schedule.Makespan(orig); !strings.HasPrefix(out, want) || !strings.Contains(out, " makespan "+strconv.Itoa(m)+",") {
		t.Errorf("stdout %q, want %q… with makespan %d", out, want, m)
	}
	if code, out, errOut := runCLI(t, "verify", "--schedule", sched); code != 0 || !strings.HasPrefix(out, "valid: pp,") {
		t.Errorf("verify of the import: exit %d, %q %q", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "export", "-s", sched); code != 0 {
		t.Errorf("export of the import: exit %d", code)
	} else if data, _ := os.ReadFile(csv); out != string(data) {
		t.Errorf("export(import(csv)) =\n%s\nwant\n%s", out, data)
	}
	if _, err := os.Stat(plc); err != nil {
		t.Error(err)
	}
	if code, _, errOut := runCLI(t, "search", "--placement-file", plc, "--memory", "4", "-n", "8"); code != 0 {
		t.Errorf("search on the imported placement: exit %d: %s", code, errOut)
	}
	bad := filepath.Join("..", "..", "torchcsv", "testdata", "bad")
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"import"}, "--torch-csv FILE is required"},
		{[]string{"import", "--torch-csv", filepath.Join(dir, "none.csv")}, "no such file or directory"},
		{[]string{"import", "--torch-csv", filepath.Join(bad, "unknown-type.csv")}, `type "X" is not F, B, I or W`},
		{[]string{"import", "--torch-csv", filepath.Join(bad, "stage-on-two-ranks.csv")}, "each stage runs on one rank"},
		{[]string{"import", "--torch-csv", filepath.Join(bad, "deadlock.csv")}, "PyTorch would wait forever"},
		{[]string{"import", "--torch-csv", csv, "--memory", "3"}, "memory"},
		{[]string{"import", "--torch-csv", csv, "--forward-time", "0"}, "--forward-time must be in 1..1000000, got 0"},
		{[]string{"import", "--torch-csv", csv, "--out", sched}, "exists (use --force to overwrite it)"},
		{[]string{"import", "--torch-csv", csv, "--out", sched, "--placement-out", sched}, "name the same file"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.err)
		}
	}
}

// The compute_comms export reads back to the same orders; the torchtitan
// bundle is a folder with the CSV and the settings; every file of
// PyTorch's forms imports with its notes on stdout; every bad one exits 2
// with one line.
func TestExportImportForms(t *testing.T) {
	dir := t.TempDir()
	comms := filepath.Join(dir, "c.csv")
	if code, out, errOut := runCLI(t, "export", "-s", goldenSchedule, "--format", "torch-csv-comms", "--out", comms); code != 0 ||
		!strings.HasSuffix(out, "(PyTorch pipelining CSV, compute_comms)\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut := runCLI(t, "import", "--torch-csv", comms)
	if code != 0 || !strings.HasPrefix(out, "note: compute_comms format: ") || strings.Count(out, "\n") != 2 {
		t.Fatalf("import of the compute_comms export: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	titan := filepath.Join(dir, "titan")
	if code, out, errOut := runCLI(t, "export", "-s", goldenSchedule, "--format", "torchtitan", "--out", titan); code != 0 ||
		!strings.Contains(out, "4 ranks, 4 stages (loop style, 1 per rank)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	py, err := os.ReadFile(filepath.Join(titan, "torchtitan_pipeline.py"))
	if err != nil || !strings.Contains(string(py), `config.parallelism.pipeline_parallel_schedule_csv = "`+filepath.Join(titan, "schedule.csv")+`"`) {
		t.Fatalf("torchtitan_pipeline.py: %v\n%s", err, py)
	}
	read := filepath.Join("..", "..", "torchcsv", "testdata", "read")
	for _, f := range []string{"overlap-mixed.csv", "older-naming.csv", "older-naming-comms.csv", "current-comms.csv"} {
		code, out, errOut := runCLI(t, "import", "--torch-csv", filepath.Join(read, f))
		if code != 0 || !strings.HasPrefix(out, "note: ") || !strings.Contains(out, "verified\n") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", f, code, out, errOut)
		}
	}
	bad := filepath.Join("..", "..", "torchcsv", "testdata", "bad-read")
	files, err := filepath.Glob(filepath.Join(bad, "*.csv"))
	if err != nil || len(files) < 20 {
		t.Fatalf("%d bad files: %v", len(files), err)
	}
	for _, f := range files { // every bad cell kind, every broken send or receive
		code, out, errOut := runCLI(t, "import", "--torch-csv", f)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tessel: "+f+": ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", f, code, out, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"import", "--torch-csv", filepath.Join(read, "older-naming.csv"), "--torch-naming", "new"}, `--torch-naming must be one of auto, current, old, got "new"`},
		{[]string{"import", "--torch-csv", filepath.Join(read, "older-naming.csv"), "--torch-naming", "current"}, "runs before the input gradient"},
		{[]string{"import", "--torch-csv", filepath.Join(bad, "comm-deadlock.csv")}, "the sends and receives deadlock"},
		{[]string{"import", "--torch-csv", filepath.Join(bad, "overlap-unclosed.csv")}, `"(" without ")"`},
		{[]string{"export", "-s", goldenSchedule, "--format", "torchtitan"}, "--format torchtitan writes a folder: give --out DIR"},
		{[]string{"export", "-s", goldenSchedule, "--split", "x.json"}, "--split applies to --format torchtitan"},
		{[]string{"export", "-s", goldenSchedule, "--format", "torchtitan", "--out", titan}, "exists (use --force to overwrite it)"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.err)
		}
	}
}

// From a layer profile to a torchtitan bundle: the split's layer names
// become module_fqns_per_model_part; a split of another schedule is
// refused.
func TestExportTorchtitanModules(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join("..", "..", "testdata", "models", "megatron-gpt.json")
	plc, split, sched := filepath.Join(dir, "p.json"), filepath.Join(dir, "split.json"), filepath.Join(dir, "s.json")
	code, out, errOut := runCLI(t, "partition", "--model", model, "--chunks", "2", "--json", "--out", plc)
	if code != 0 {
		t.Fatalf("partition: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(split, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "search", "--placement-file", plc, "--memory", "16", "-n", "8", "--out", sched); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	titan := filepath.Join(dir, "titan")
	if code, out, errOut := runCLI(t, "export", "-s", sched, "--format", "torchtitan", "--split", split, "--out", titan); code != 0 ||
		!strings.Contains(out, "8 stages (loop style, 2 per rank)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	py, _ := os.ReadFile(filepath.Join(titan, "torchtitan_pipeline.py"))
	if !strings.Contains(string(py), "config.parallelism.module_fqns_per_model_part = [\n        [\"embedding\"],\n") || !strings.Contains(string(py), "\"decoder.13\", \"loss\"],\n    ]\n") {
		t.Errorf("torchtitan_pipeline.py:\n%s", py)
	}
	code, out, errOut = runCLI(t, "export", "-s", goldenSchedule, "--format", "torchtitan", "--split", split, "--out", filepath.Join(dir, "t2"))
	if code != 2 || out != "" || !strings.Contains(errOut, "module names of 8 stages for a schedule of 4 stages") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
