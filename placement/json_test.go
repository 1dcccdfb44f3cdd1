package placement

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	placementsDir = "../testdata/placements"
	badDir        = "../testdata/bad"
)

func TestLoadBad(t *testing.T) {
	tests := []struct {
		file string
		want string // a substring naming the offending item
	}{
		{"malformed.json", "malformed JSON at line 6, column 5"},
		{"unknown-field.json", `block "f0": unknown field "colour"`},
		{"unknown-dep.json", `deps[1]: unknown id "b9"`},
		{"cycle.json", "cycle f1 -> b1 -> f1"},
		{"device-range.json", `placement "v-shape": block "f3": device 7 out of range 0..3`},
		{"time-zero.json", `block "b0": time must be in 1..1000000, got 0`},
		{"duplicate-id.json", `duplicate id "f0"`},
		{"empty.json", `placement "nothing": no blocks`},
		{"missing-field.json", `block "f0": missing field "time"`},
		{"bad-kind.json", `block "o0": unknown kind "optimizer"`},
		{"trailing.json", "trailing data after the placement object at line 8, column 1"},
		{"duplicate-device.json", `block "tp": device 1 listed twice`},
		{"self-dep.json", `dep 0: "f0" depends on itself`},
		{"duplicate-dep.json", "dep 1: duplicate dependency f0 -> b0"},
		{"wrong-type.json", `block "f0": field "time": want an integer, got a string`},
		{"null-deps.json", `field "deps": want an array, got null`},
		{"case-field.json", `block "f0": unknown field "Time"`},
		{"no-devices.json", "devices must be in 1..4096, got 0"},
		{"empty-device-list.json", `block "f0": no devices`},
		{"dep-arity.json", "deps[0]: want [from, to] or [from, to, size], got 4 items"},
		{"dep-size-type.json", `deps[0][2]: size: want a number, got a string`},
		{"dep-size-negative.json", `placement "two": dep 0: f0 -> f1: size must be in 0..1e+12, got -2`},
		{"offload-backward.json", `block "b0": only a forward block's activation can be offloaded or recomputed, not a backward block's`},
		{"checkpoint-too-big.json", `block "f0": checkpoint 2 must be less than the block's memory 2`},
		{"offload-no-consumer.json", `block "f0": no gradient block needs its activation, so it cannot be offloaded or recomputed`},
		{"offload-type.json", `block "f0": field "offload": want an integer, got a string`},
		{"candidates-range.json", `block "f0": candidates[1]: device 2 out of range 0..1`},
		{"candidates-empty.json", `block "f0": field "candidates": empty list`},
		{"candidates-empty-group.json", `block "f0": candidates[1]: empty device group`},
		{"candidates-and-devices.json", `block "f0": both "devices" and "candidates"`},
		{"candidates-chosen-outside.json", `block "f0": chosen devices [2] are not among the candidates [[0] [1]]`},
		{"candidates-unsorted.json", `block "f0": candidates[1]: devices [2 1] not ascending and distinct`},
		{"candidates-chosen-alone.json", `block "f0": field "chosen" without "candidates"`},
		{"overlap-both.json", `overlap: both a time and a factor`},
		{"overlap-unknown-id.json", `field "overlap": pairs[0]: unknown id "b9"`},
		{"overlap-pair-time.json", `overlap: pairs[0]: time 0 < 1`},
		{"units-no-step.json", `field "units": units: "time" needs "step" (what one time step is)`},
		{"units-unknown-time.json", `field "units": units: time: unknown time unit "hours"`},
		{"units-empty.json", `field "units": units: give "step", "memory_bytes" or both`},
		{"units-search-no-step.json", `field "units": units: "search_step" needs "step"`},
	}
	files, err := filepath.Glob(filepath.Join(badDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("%d files in %s, %d in the table: keep them in step", len(files), badDir, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(badDir, tt.file)
			p, err := Load(path)
			if err == nil {
				t.Fatalf("loaded %s: %+v", path, p)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if !strings.HasPrefix(msg, path+": ") {
				t.Errorf("error %q does not start with the path", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want it to contain %q", msg, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.json")
	_, err := Load(path)
	if err == nil || err.Error() != path+": no such file or directory" {
		t.Fatalf("got %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	const block = `{"id": "f0", "kind": "forward", "devices": [0], "time": 1, "memory": 1}`
	tests := []struct {
		name, in, want string
	}{
		{"empty input", "", "empty input"},
		{"spaces only", "  \n ", "empty input"},
		{"truncated", `{"devices": 1, "blocks": [`, "malformed JSON: unexpected end of input"},
		{"not an object", `[1, 2]`, "want an object, got an array"},
		{"null", `null`, "want an object, got null"},
		{"trailing garbage", `{"devices": 1, "blocks": [` + block + `], "deps": []} x`, "trailing data after the placement object at line 1, column "},
		{"missing devices", `{"blocks": [` + block + `], "deps": []}`, `missing field "devices"`},
		{"missing blocks", `{"devices": 1, "deps": []}`, `missing field "blocks"`},
		{"missing deps", `{"devices": 1, "blocks": [` + block + `]}`, `missing field "deps"`},
		{"unknown top field", `{"devices": 1, "blocks": [` + block + `], "deps": [], "memory": 4}`, `unknown field "memory"`},
		{"field twice", `{"devices": 1, "devices": 2, "blocks": [` + block + `], "deps": []}`, `field "devices" given twice`},
		{"name not string", `{"name": 4, "devices": 1, "blocks": [` + block + `], "deps": []}`, `field "name": want a string, got a number`},
		{"name null", `{"name": null, "devices": 1, "blocks": [` + block + `], "deps": []}`, `field "name": want a string, got null`},
		{"fraction", `{"devices": 1.5, "blocks": [` + block + `], "deps": []}`, `field "devices": want an integer, got 1.5`},
		{"exponent", `{"devices": 1e1, "blocks": [` + block + `], "deps": []}`, `field "devices": want an integer, got 1e1`},
		{"too big", `{"devices": 100000000000000000000, "blocks": [` + block + `], "deps": []}`, `want an integer, got 100000000000000000000`},
		{"block not object", `{"devices": 1, "blocks": [3], "deps": []}`, `block 0: want an object, got a number`},
		{"missing id", `{"devices": 1, "blocks": [{"kind": "forward", "devices": [0], "time": 1, "memory": 1}], "deps": []}`, `block 0: missing field "id"`},
		{"device not int", `{"devices": 2, "blocks": [{"id": "t", "kind": "forward", "devices": [0, "1"], "time": 1, "memory": 1}], "deps": []}`, `block "t": field "devices": item 1: want an integer, got a string`},
		{"kind not string", `{"devices": 1, "blocks": [{"id": "f", "kind": 1, "devices": [0], "time": 1, "memory": 1}], "deps": []}`, `block "f": field "kind": want a string, got a number`},
		{"memory null", `{"devices": 1, "blocks": [{"id": "f", "kind": "forward", "devices": [0], "time": 1, "memory": null}], "deps": []}`, `block "f": field "memory": want an integer, got null`},
		{"dep not array", `{"devices": 1, "blocks": [` + block + `], "deps": ["f0"]}`, `deps[0]: want an array, got a string`},
		{"dep id not string", `{"devices": 1, "blocks": [` + block + `], "deps": [["f0", 1]]}`, `deps[0][1]: want a string, got a number`},
		{"named", `{"name": "mine", "devices": 1, "blocks": [` + block + `], "deps": [["f0", "zz"]]}`, `placement "mine": deps[0]: unknown id "zz"`},
		{"cased key", `{"Devices": 1, "blocks": [` + block + `], "deps": []}`, `unknown field "Devices"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("parsed: %+v", p)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestRoundTrip checks every placement file: it loads, and writing it gives
// back the very same bytes (the files are kept in the written form), and
// parsing those gives the same placement.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(placementsDir, "*.json"))
	if err != nil || len(files) < 7 {
		t.Fatalf("placement files: %v, %v", files, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), data) {
				t.Errorf("written form differs from the file:\n%s", buf.Bytes())
			}
			q, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !p.Equal(q) {
				t.Errorf("parse after write differs")
			}
			compact, err := p.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsAny(compact, " \n") && !strings.Contains(p.Name, " ") {
				t.Errorf("MarshalJSON not compact: %s", compact)
			}
			r, err := Parse(compact)
			if err != nil || !p.Equal(r) {
				t.Errorf("MarshalJSON does not parse back: %v", err)
			}
		})
	}
}

func TestWriteFormat(t *testing.T) {
	p := &Placement{Devices: 2, Blocks: []Block{
		{ID: "a<b", Kind: Forward, Devices: []int{0, 1}, Time: 2, Memory: 0},
	}}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	// No name: the field is left out; no deps: an empty list, still present.
	want := `{
  "devices": 2,
  "blocks": [
    {"id": "a\u003cb", "kind": "forward", "devices": [0, 1], "time": 2, "memory": 0}
  ],
  "deps": []
}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	q, err := Parse(buf.Bytes())
	if err != nil || !q.Equal(p) {
		t.Fatalf("parse back: %v %+v", err, q)
	}
	c, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"devices":2,"blocks":[{"id":"a\u003cb","kind":"forward","devices":[0,1],"time":2,"memory":0}],"deps":[]}`; string(c) != want {
		t.Errorf("MarshalJSON: got %s, want %s", c, want)
	}
}

func TestWriteInvalid(t *testing.T) {
	p := small()
	p.Deps = append(p.Deps, Dep{0, 9})
	var buf bytes.Buffer
	if err := p.Write(&buf); err == nil || buf.Len() > 0 {
		t.Errorf("Write of an invalid placement: err %v, %d bytes", err, buf.Len())
	}
	if _, err := json.Marshal(p); err == nil {
		t.Error("json.Marshal of an invalid placement passed")
	}
}

// TestEmbedded checks that a placement inside another document (the
// schedule file) goes through MarshalJSON and UnmarshalJSON.
func TestEmbedded(t *testing.T) {
	type doc struct {
		Placement *Placement `json:"placement"`
		N         int        `json:"n"`
	}
	in := doc{Placement: small(), N: 3}
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Placement.Equal(in.Placement) || out.N != 3 {
		t.Errorf("got %+v", out)
	}
	bad := bytes.Replace(data, []byte(`"time": 3`), []byte(`"time": 0`), 1)
	err = json.Unmarshal(bad, &out)
	if err == nil || !strings.Contains(err.Error(), `block "b1": time must be in 1..1000000, got 0`) {
		t.Errorf("embedded invalid placement: %v", err)
	}
}

func TestUnmarshalKeepsOnError(t *testing.T) {
	p := small()
	if err := p.UnmarshalJSON([]byte(`{"devices": 1}`)); err == nil {
		t.Fatal("no error")
	}
	if !p.Equal(small()) {
		t.Error("placement changed by a failed UnmarshalJSON")
	}
}

// A placement in real units says what its steps and memory units are; the
// written form keeps them, and a placement without them is written as
// before.
func TestUnitsRoundTrip(t *testing.T) {
	p, err := Load(placementsDir + "/llama7b-8x80.json")
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Units; u == nil || u.Time != "ms" || !(u.Step > 0) || u.Search < 2 || !(u.MemoryBytes > 0) {
		t.Fatalf("units %+v", p.Units)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	q, err := Parse(b.Bytes())
	if err != nil || !q.Equal(p) {
		t.Fatalf("round trip: %v", err)
	}
	data, _ := os.ReadFile(placementsDir + "/llama7b-8x80.json")
	if !bytes.Equal(data, b.Bytes()) {
		t.Errorf("written form differs:\n%s", b.Bytes())
	}
	q.Units = nil
	if q.Equal(p) {
		t.Error("placements with and without units are equal")
	}
	b.Reset()
	if err := q.Write(&b); err != nil || bytes.Contains(b.Bytes(), []byte("units")) {
		t.Errorf("a placement without units is written with them (%v)", err)
	}
}
