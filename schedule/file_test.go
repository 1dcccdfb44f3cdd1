package schedule_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// goldenSchedules are the schedules whose files live in testdata; the
// renderings' golden files use them too.
func goldenSchedules(t testing.TB) map[string]*schedule.Schedule {
	v := oneF1B(t, placementtest.Builtin(t, "v-shape", placement.Options{}), 8, 4)
	v.Repetend = oneF1BRepetend(t, v)
	m := greedy(placementtest.Builtin(t, "m-shape", placement.Options{}), 3)
	m.Memory = 3
	k := greedy(placementtest.Builtin(t, "k-shape", placement.Options{}), 2)
	long := oneF1B(t, placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2}), 60, 0)
	// Input and weight blocks (the zero-bubble kinds) round-trip and render.
	dp := greedy(placementtest.Builtin(t, "dualpipe", placement.Options{Devices: 2}), 2)
	return map[string]*schedule.Schedule{"v-shape-1f1b": v, "m-shape-greedy": m, "k-shape-greedy": k, "v-shape-long": long, "dualpipe-greedy": dp}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./schedule -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./schedule -update and review the diff):\n%s", path, got)
	}
}

func write(t testing.TB, s *schedule.Schedule) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteGolden(t *testing.T) {
	for name, s := range goldenSchedules(t) {
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		golden(t, filepath.Join("schedules", name+".json"), write(t, s))
	}
}

// Write, Parse, Write gives the same bytes, and Parse gives the schedule
// back (instances in file order, metrics as claimed).
func TestRoundTrip(t *testing.T) {
	scheds := goldenSchedules(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 20 {
		names := placement.BuiltinNames()
		p := placementtest.Builtin(t, names[trial%len(names)], placement.Options{Devices: 2 + 2*rng.IntN(2)})
		s := randomValid(rng, p, 1+rng.IntN(4), 2)
		s.Memory = rng.IntN(4)
		scheds[p.Name+string(rune('a'+trial))] = s
	}
	for name, s := range scheds {
		data := write(t, s)
		got, err := schedule.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if again := write(t, got); !bytes.Equal(again, data) {
			t.Errorf("%s: the second write differs:\n%s\n---\n%s", name, data, again)
		}
		want := *s
		want.Instances = slices.Clone(s.Instances)
		want.Sort()
		m := schedule.Measure(s)
		want.Claimed = &schedule.Claimed{Makespan: m.Makespan, BubbleRate: schedule.RoundRate(m.BubbleRate), PeakMemory: m.PeakMemory}
		if !got.Placement.Equal(want.Placement) {
			t.Errorf("%s: placement differs", name)
		}
		got.Placement, want.Placement = nil, nil
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("%s: Parse(Write(s)) = %+v, want %+v", name, got, &want)
		}
	}
}

// validFile is a small schedule file the error cases edit.
const validFile = `{
  "placement": {"name": "two", "devices": 1, "blocks": [
    {"id": "f", "kind": "forward", "devices": [0], "time": 1, "memory": 1},
    {"id": "b", "kind": "backward", "devices": [0], "time": 2, "memory": -1}],
    "deps": [["f", "b"]]},
  "micro_batches": 1,
  "memory": 1,
  "instances": [{"block": "f", "micro": 0, "start": 0}, {"block": "b", "micro": 0, "start": 1}],
  "repetend": {"nr": 1, "period": 3, "offsets": {"f": 0, "b": 0}, "start": 0, "iterations": 1},
  "metrics": {"makespan": 3, "bubble_rate": 0, "peak_memory": [1]}
}`

func TestParseErrors(t *testing.T) {
	s, err := schedule.Parse([]byte(validFile))
	if err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	tests := []struct {
		name     string
		old, new string // replace old by new in validFile
		want     string
	}{
		{"empty", validFile, "", "empty input: want a schedule object"},
		{"not an object", validFile, "[]", "want a schedule object, got an array"},
		{"malformed", `"memory": 1,`, `"memory": 1`, "malformed JSON at line 8, column 3"}, // the quote that should follow a comma
		{"trailing", validFile, validFile + " {}", "trailing data after the schedule object at line 11, column 3"},
		{"unknown field", `"memory": 1,`, `"memory": 1, "budget": 2,`, `unknown field "budget"`},
		{"field case", `"memory": 1,`, `"Memory": 1,`, `unknown field "Memory"`},
		{"twice", `"memory": 1,`, `"memory": 1, "memory": 2,`, `field "memory" given twice`},
		{"missing placement", `"placement"`, `"xplacement"`, `unknown field "xplacement"`},
		{"missing memory", `"memory": 1,`, ``, `missing field "memory"`},
		{"missing instances", `"instances": [{"block": "f", "micro": 0, "start": 0}, {"block": "b", "micro": 0, "start": 1}],`, ``, `missing field "instances"`},
		{"null memory", `"memory": 1,`, `"memory": null,`, `field "memory": want an integer, got null`},
		{"fractional", `"memory": 1,`, `"memory": 1.5,`, `field "memory": want an integer, got 1.5`},
		{"negative memory", `"memory": 1,`, `"memory": -1,`, `field "memory": -1 is negative`},
		{"no micro-batches", `"micro_batches": 1,`, `"micro_batches": 0,`, `field "micro_batches": 0 out of range 1..1048576`},
		{"placement null", validFile, `{"placement": null, "micro_batches": 1, "memory": 0, "instances": []}`, `field "placement": want an object, got null`},
		{"bad placement", `"time": 2`, `"time": 0`, `field "placement": placement "two": block "b": `},
		{"unknown block", `{"block": "b", "micro": 0`, `{"block": "c", "micro": 0`, `field "instances": item 1: unknown block "c"`},
		{"instance field", `"start": 1}`, `"start": 1, "end": 3}`, `field "instances": item 1: unknown field "end"`},
		{"instance missing start", `, "start": 1}`, `}`, `field "instances": item 1: missing field "start"`},
		{"instances not a list", `"instances": [{"block": "f", "micro": 0, "start": 0}, {"block": "b", "micro": 0, "start": 1}]`, `"instances": {}`, `field "instances": want an array, got an object`},
		{"offset unknown id", `"b": 0}`, `"b": 0, "c": 1}`, `field "repetend": field "offsets": unknown field "c"`},
		{"offset missing id", `, "b": 0}`, `}`, `field "repetend": field "offsets": missing field "b"`},
		{"repetend field", `"iterations": 1}`, `"iterations": 1, "x": 1}`, `field "repetend": unknown field "x"`},
		{"metrics type", `"peak_memory": [1]`, `"peak_memory": 1`, `field "metrics": field "peak_memory": want an array, got a number`},
		{"metrics field", `"makespan": 3,`, `"makespan": 3, "valid": true,`, `field "metrics": unknown field "valid"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(validFile, tt.old) {
				t.Fatalf("%q not in the valid file", tt.old)
			}
			_, err := schedule.Parse([]byte(strings.Replace(validFile, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error %v, want %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
		})
	}
}

// Repetend and metrics are read but not trusted: a file whose claims are
// false parses, and Verify says what is wrong.
func TestParseUntrusted(t *testing.T) {
	data := strings.Replace(validFile, `"makespan": 3`, `"makespan": 2`, 1)
	data = strings.Replace(data, `"period": 3`, `"period": 0`, 1)
	s, err := schedule.Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var ve *schedule.VerifyError
	if !errors.As(verify.Schedule(s), &ve) {
		t.Fatal("want a *VerifyError")
	}
	var msgs []string
	for _, v := range ve.Violations {
		msgs = append(msgs, v.Message)
	}
	want := []string{"repetend: period 0 < 1", "metrics: makespan 2 claimed, measured 3"}
	if !slices.Equal(msgs, want) {
		t.Errorf("violations %q, want %q", msgs, want)
	}
	// Write recomputes the metrics.
	if got := write(t, s); !bytes.Contains(got, []byte(`"metrics": {"makespan": 3,`)) {
		t.Errorf("Write kept the claimed metrics:\n%s", got)
	}
}

func TestLoad(t *testing.T) {
	s, err := schedule.Load(filepath.Join("testdata", "schedules", "v-shape-1f1b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Error(err)
	}
	_, err = schedule.Load(filepath.Join("testdata", "no-such-file.json"))
	if want := "testdata/no-such-file.json: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("Load error %v, want %q", err, want)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"memory": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := schedule.Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": missing field") {
		t.Errorf("Load error %v, want the path and the missing field", err)
	}
}

func TestWriteErrors(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	for _, s := range []*schedule.Schedule{
		{Spec: spec.Spec{MicroBatches: 1}},
		{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Instances: []schedule.Instance{{Block: 9}}},
		{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Repetend: &schedule.Repetend{Offsets: []int{0}}},
		{Spec: spec.Spec{Placement: &placement.Placement{Name: "empty", Devices: 1}, MicroBatches: 1}},
	} {
		if err := s.Write(&bytes.Buffer{}); err == nil {
			t.Errorf("Write(%+v) succeeded", s)
		}
	}
}

// FuzzParseSchedule: Parse never panics; whatever it accepts can be
// verified, measured and written (package render fuzzes the renderings of
// the same corpus), and the written file reads
// back to the same bytes. The seed corpus is testdata/fuzz/FuzzParseSchedule
// plus the golden schedule files.
func FuzzParseSchedule(f *testing.F) {
	f.Add([]byte(validFile))
	f.Add([]byte(`{"placement": {"name": "x", "devices": 1, "blocks": [{"id": "f", "kind": "forward", "devices": [0], "time": 1, "memory": 1}, {"id": "b", "kind": "backward", "devices": [0], "time": 1, "memory": -1}], "deps": [["f", "b"]]}, "micro_batches": 4, "memory": 1, "periodic": {"head": [], "period": [{"block": "f", "micro": 0, "start": 0}, {"block": "b", "micro": 0, "start": 1}], "shift": {"time": 2, "micro": 1}, "repetitions": 4, "tail": []}}`))
	files, _ := filepath.Glob(filepath.Join("testdata", "schedules", "*.json"))
	files = append(files, filepath.Join("testdata", "link-order.json"))
	for _, path := range files {
		if data, err := os.ReadFile(path); err == nil && len(data) < 4000 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := schedule.Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
			return
		}
		valid := verify.Schedule(s) == nil
		_ = schedule.Measure(s)
		// The steady-state analysis every report runs: a repetend it
		// names in a valid schedule passes the verifier's check.
		if valid && s.Repetend == nil {
			if rp := schedule.FindRepetend(s); rp != nil {
				named := *s
				named.Repetend = rp
				if err := verify.Schedule(&named); err != nil {
					t.Fatalf("the repetend FindRepetend names fails verification: %v", err)
				}
			}
		}
		var first bytes.Buffer
		if err := s.Write(&first); err != nil {
			t.Fatalf("Write of a parsed schedule: %v", err)
		}
		s2, err := schedule.Parse(first.Bytes())
		if err != nil {
			t.Fatalf("Parse of a written schedule: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := s2.Write(&second); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Errorf("round trip not byte-stable:\n%s\n---\n%s", first.Bytes(), second.Bytes())
		}
	})
}
