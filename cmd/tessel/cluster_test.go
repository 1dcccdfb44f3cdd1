package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Transfers in the search: v-shape on 4 devices, every transfer taking 1, N = 32. The
// searched schedule, with the transfers in its model, is no worse than
// 1F1B's with the same transfers; its file records the cluster, so that
// tessel verify re-checks it with the same times, and its non-blocking
// programs simulated on that cluster end exactly at its makespan.
func TestSearchOnClusterSimulatesExactly(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	cl := filepath.Join("..", "..", "testdata", "clusters", "four-transfer-1.json")
	code, stdout, errOut := runCLI(t, "search", "--placement", "v-shape", "--memory", "4", "-n", "32", "--cluster", cl, "--json", "--out", out)
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	var sum struct{ Makespan int }
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(data), "\n  \"cluster\": {") {
		t.Fatalf("the schedule file records no cluster (%v)", err)
	}
	if code, _, errOut := runCLI(t, "verify", "--schedule", out); code != 0 {
		t.Fatalf("verify: exit %d: %s", code, errOut)
	}
	code, stdout, errOut = runCLI(t, "simulate", "--schedule", out, "--json")
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errOut)
	}
	var sim struct {
		Cluster bool
		Runs    []struct {
			Mode     string
			Makespan int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &sim); err != nil {
		t.Fatal(err)
	}
	if !sim.Cluster || sim.Runs[0].Mode != "nonblocking" || sim.Runs[0].Makespan != sum.Makespan {
		t.Errorf("simulated %+v, schedule makespan %d", sim, sum.Makespan)
	}
	// The same cluster by flags gives the same schedule file, but for the
	// device names, which only the cluster file gives.
	out2 := filepath.Join(dir, "s2.json")
	if code, _, errOut := runCLI(t, "search", "--placement", "v-shape", "--memory", "4", "-n", "32", "--transfer-time", "1", "--out", out2); code != 0 {
		t.Fatalf("search --transfer-time: exit %d: %s", code, errOut)
	}
	byFile, byFlags := withoutDeviceNames(t, out), withoutDeviceNames(t, out2)
	if !reflect.DeepEqual(byFile, byFlags) {
		t.Errorf("the cluster by file and by flags give different schedule files:\n%v\n%v", byFile, byFlags)
	}
	// 1F1B with the same transfers, in the model and simulated.
	code, stdout, errOut = runCLI(t, "compare", "--placement", "v-shape", "--memory", "4", "-n", "32", "--transfer-time", "1", "--format", "json", "--schedules", filepath.Join(dir, "c"))
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	var cmp struct {
		Rows []struct {
			Method   string
			Makespan *int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &cmp); err != nil {
		t.Fatal(err)
	}
	ofob := -1
	for _, r := range cmp.Rows {
		if r.Method == "1F1B" && r.Makespan != nil {
			ofob = *r.Makespan
		}
	}
	if ofob < 0 || sum.Makespan > ofob {
		t.Errorf("searched makespan %d, 1F1B's %d", sum.Makespan, ofob)
	}
	code, stdout, errOut = runCLI(t, "simulate", "--schedule", filepath.Join(dir, "c", "1f1b.json"), "--json")
	if code != 0 || !strings.Contains(stdout, `"makespan": `+itoa(ofob)) {
		t.Errorf("1F1B simulated: exit %d %s %s, want makespan %d", code, stdout, errOut, ofob)
	}
}

// withoutDeviceNames is the schedule file at path, decoded, with the
// names of its cluster's devices left out.
func withoutDeviceNames(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	cl, ok := f["cluster"].(map[string]any)
	if !ok {
		t.Fatalf("%s records no cluster", path)
	}
	for _, d := range cl["devices"].([]any) {
		delete(d.(map[string]any), "name")
	}
	return f
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Cluster files get the placement file's treatment on the command line:
// one line naming the file and the problem, exit 2.
func TestBadClusters(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bad", "clusters", "*.json"))
	if err != nil || len(files) < 8 {
		t.Fatalf("%d bad cluster files: %v", len(files), err)
	}
	good := filepath.Join("..", "..", "testdata", "clusters", "two-nodes-8.json")
	for _, args := range [][]string{
		{"search", "--cluster", good},
		{"search", "--device-speed", "7=0.5"},
		{"search", "--device-speed", "1:0.5"},
		{"search", "--device-speed", "1=0"},
		{"search", "--transfer-time", "-1"},
		{"search", "--cluster", good, "--transfer-time", "1"},
		{"simulate", "--programs", ".", "--transfer-time", "1"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "panic") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	for _, f := range files {
		code, out, errOut := runCLI(t, "optimal", "--cluster", f)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, filepath.Base(f)) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", f, code, out, errOut)
		}
	}
}

// tessel gen --device-speed: the schedule's orders on the cluster, the
// programs carrying the blocks' times there, and simulate --programs of
// them ending where simulate --schedule on the same cluster does.
func TestGenOnCluster(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, "s.json")
	if code, _, errOut := runCLI(t, "search", "--placement", "v-shape", "--memory", "4", "-n", "8", "--out", s); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	out := filepath.Join(dir, "run")
	code, stdout, errOut := runCLI(t, "gen", "--schedule", s, "--out", out, "--device-speed", "1=0.5")
	if code != 0 || !strings.Contains(stdout, "on the cluster the schedule's orders take") {
		t.Fatalf("gen: exit %d: %s %s", code, stdout, errOut)
	}
	data, err := os.ReadFile(filepath.Join(out, "rank1.json"))
	if err != nil || !strings.Contains(string(data), `{"id":"b1","kind":"backward","devices":[1],"time":6,`) {
		t.Fatalf("rank1.json lacks b1's time 6 on the half-speed device (%v)", err)
	}
	_, fromProgs, _ := runCLI(t, "simulate", "--programs", out, "--comm-time", "0", "--json")
	_, fromSched, _ := runCLI(t, "simulate", "--schedule", s, "--device-speed", "1=0.5", "--json")
	var a, b struct{ Runs []struct{ Makespan int } }
	if json.Unmarshal([]byte(fromProgs), &a) != nil || json.Unmarshal([]byte(fromSched), &b) != nil || len(a.Runs) == 0 || len(b.Runs) == 0 || a.Runs[0].Makespan != b.Runs[0].Makespan {
		t.Errorf("programs %s, schedule %s", fromProgs, fromSched)
	}
}

// Links as a resource. v-shape on 4 devices, transfers
// of 5 (more than the forward's 1, so forwards' tensors queue on their
// link), N = 32, memory 8. Searched with --channels, the schedule has the
// queues in its model: verify accepts it and the simulator, whose links
// carry one transfer at a time in the same order, ends exactly at its
// makespan. Searched without, it ends later once its links queue.
func TestSearchWithChannels(t *testing.T) {
	dir := t.TempDir()
	args := []string{"search", "--placement", "v-shape", "--memory", "8", "-n", "32", "--transfer-time", "5", "--json"}
	search := func(name string, extra ...string) (path string, makespan int) {
		t.Helper()
		path = filepath.Join(dir, name)
		code, stdout, errOut := runCLI(t, append(append(args, extra...), "--out", path)...)
		if code != 0 {
			t.Fatalf("search %v: exit %d: %s", extra, code, errOut)
		}
		var sum struct{ Makespan int }
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatal(err)
		}
		return path, sum.Makespan
	}
	simulate := func(path string, extra ...string) (makespan, late int) {
		t.Helper()
		code, stdout, errOut := runCLI(t, append([]string{"simulate", "--schedule", path, "--json"}, extra...)...)
		if code != 0 {
			t.Fatalf("simulate %s: exit %d: %s", path, code, errOut)
		}
		var sim struct {
			Channels bool
			Runs     []struct {
				Makespan int
				Late     *int
			}
		}
		if err := json.Unmarshal([]byte(stdout), &sim); err != nil {
			t.Fatal(err)
		}
		if !sim.Channels || sim.Runs[0].Late == nil {
			t.Fatalf("simulate %s: not with channels: %s", path, stdout)
		}
		return sim.Runs[0].Makespan, *sim.Runs[0].Late
	}
	queued, ms := search("queued.json", "--channels")
	data, err := os.ReadFile(queued)
	if err != nil || !strings.Contains(string(data), `"channels": true`) {
		t.Fatalf("the schedule file does not record the channels (%v)", err)
	}
	if code, _, errOut := runCLI(t, "verify", "--schedule", queued); code != 0 {
		t.Fatalf("verify: exit %d: %s", code, errOut)
	}
	if got, _ := simulate(queued); got != ms {
		t.Errorf("searched with channels: makespan %d, simulated %d", ms, got)
	}
	free, freeMs := search("free.json")
	got, late := simulate(free, "--channels")
	if got <= ms || late <= 0 {
		t.Errorf("searched without channels: makespan %d, simulated with them %d (late %d); with them in the model %d", freeMs, got, late, ms)
	}
	// --channels alone, where no transfer takes time, is a usage error.
	if code, _, errOut := runCLI(t, "search", "--placement", "v-shape", "-n", "4", "--channels"); code != 2 || !strings.Contains(errOut, "--channels: no transfer takes time") {
		t.Errorf("--channels without transfers: exit %d: %s", code, errOut)
	}
}
