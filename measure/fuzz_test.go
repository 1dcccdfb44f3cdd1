package measure

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/fuzzcorpus"
	"github.com/tessel-pp/tessel/runtimegen"
)

// FuzzParseTrace feeds the trace reader arbitrary bytes: a trace or a
// one-line error, never a panic; a trace that parses has ordered spans,
// one per op in every iteration.
func FuzzParseTrace(f *testing.F) {
	f.Add([]byte(`{"rank": 0, "placement": "p", "micro_batches": 1, "ops": 2, "iterations": [{"start": 5, "ops": [[0, 1], [1, 3]], "step": [3, 4]}]}`))
	f.Add([]byte(`{"rank": 1, "placement": "p", "micro_batches": 2, "ops": 0, "iterations": [{"start": 0, "ops": [], "step": [0, 0]}]}`))
	f.Add([]byte(`{"iterations": []}`))
	f.Add([]byte(`{"rank": 0, "ops": 1, "micro_batches": 1, "iterations": [{"ops": [[2, 1]]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseTrace(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, it := range tr.Iterations {
			if len(it.Ops) != tr.Ops {
				t.Fatalf("%d spans for %d ops", len(it.Ops), tr.Ops)
			}
			last := int64(0)
			for _, s := range it.Ops {
				if s[0] < last || s[1] < s[0] {
					t.Fatalf("span %v after %d", s, last)
				}
				last = s[1]
			}
			if it.Step[0] < last || it.Step[1] < it.Step[0] {
				t.Fatalf("step %v after %d", it.Step, last)
			}
		}
	})
}

// The directories of ../testdata/measured: a traced run, and runs whose
// traces are wrong in one way each (bad-traces/<what>).
var (
	keptRun   = filepath.Join("..", "testdata", "measured", "plan-n4")
	badTraces = filepath.Join("..", "testdata", "measured", "bad-traces")
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus")

// TestFuzzCorpus checks that FuzzParseTrace's seed corpus holds every
// trace of the kept run and of the bad runs; -update rewrites it.
func TestFuzzCorpus(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(badTraces, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no bad traces: %v", err)
	}
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParseTrace"), append([]string{filepath.Join(keptRun, "results")}, dirs...), *update, "./measure")
}

// Every run in ../testdata/measured/bad-traces is refused against the
// kept run's programs, in one line that names the trace file and says
// what is wrong with it.
func TestBadTraces(t *testing.T) {
	progs, err := runtimegen.LoadPrograms(keptRun)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"no-rank-1":           "trace1.json: no trace of rank 1 (run launch.sh with --trace and --out " + filepath.Join(badTraces, "no-rank-1") + ")",
		"malformed":           `trace0.json: trace: malformed JSON at line 1, column 201: invalid character '\n' in string literal`,
		"trailing-data":       "trace0.json: trace: trailing data after the trace object at line 1, column 2673",
		"unknown-field":       `trace0.json: trace: unknown field "bogus"`,
		"wrong-type":          `trace0.json: trace: field "rank": want an integer, got a JSON string`,
		"no-iterations":       "trace0.json: trace: no iterations",
		"negative-rank":       "trace0.json: trace: rank -1: want ≥ 0",
		"ranks-swapped":       "trace0.json: the trace of rank 1, not 0",
		"other-placement":     "trace0.json: a trace of v-shape with 4 micro-batches, not of these programs (decoder-8x128, 4)",
		"other-micro-batches": "trace0.json: a trace of decoder-8x128 with 8 micro-batches, not of these programs (decoder-8x128, 4)",
		"fewer-ops":           "trace0.json: 27 ops traced, the program has 28: not these programs",
		"missing-span":        "trace0.json: trace: iteration 1: 27 spans for 28 ops",
		"span-reversed":       "trace0.json: trace: iteration 0: op 2 spans [1459470444, 620225693] after 620224832: want ordered spans",
		"spans-overlap":       "trace0.json: trace: iteration 0: op 3 spans [619685994, 1462561334] after 1459470444: want ordered spans",
		"step-reversed":       "trace0.json: trace: iteration 0: the optimizer step spans [15874369853, 15873669699] after 15872900373: want it ordered, after the last op",
		"fewer-iterations":    "trace1.json: 2 iterations, rank 0 traced 3",
	}
	dirs, err := filepath.Glob(filepath.Join(badTraces, "*"))
	if err != nil || len(dirs) != len(want) {
		t.Fatalf("%d bad runs, %d expected messages (%v)", len(dirs), len(want), err)
	}
	for _, d := range dirs {
		_, err := LoadTraces(d, progs)
		w, ok := want[filepath.Base(d)]
		switch {
		case !ok:
			t.Errorf("%s: no expected message (got %v)", d, err)
		case err == nil:
			t.Errorf("%s: loaded", d)
		case err.Error() != d+string(filepath.Separator)+w:
			t.Errorf("%s: error %q, want %q", d, err, d+string(filepath.Separator)+w)
		}
	}
	if _, err := LoadTraces(filepath.Join(keptRun, "results"), progs); err != nil {
		t.Errorf("the kept run: %v", err)
	}
}
