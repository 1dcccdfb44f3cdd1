package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/torchcsv"
)

// The hostile inputs of a robustness review, each once: sizes past the
// limits, a device as a file, names with terminal escapes, a path that
// would inject Python, meaningless flags. Each gives one clear line and exit
// 2 (never a panic, a hang, an exhausted memory), or, where it is an
// answer, the answer with its text made safe.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	model := "../../testdata/models/gpt-like.json"
	write := func(name string, v any) string {
		path := filepath.Join(dir, name)
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var m map[string]any
	data, _ := os.ReadFile(model)
	json.Unmarshal(data, &m)
	m["devices"] = 1 << 62
	huge := write("huge-devices.json", m)
	m["devices"] = 4
	var layers []any
	for i := range 20000 {
		layers = append(layers, map[string]any{"name": fmt.Sprintf("l%d", i), "forward": 1, "params": 1, "activations": 1, "backward": 2})
	}
	m["layers"] = layers
	deep := write("deep.json", m)
	var blocks []any
	for i := range 70000 {
		blocks = append(blocks, map[string]any{"id": fmt.Sprintf("f%d", i), "kind": "forward", "devices": []int{i % 4}, "time": 1, "memory": 0})
	}
	wide := write("wide.json", map[string]any{"name": "wide", "devices": 4, "blocks": blocks, "deps": []any{}})
	longName := write("long-name.json", map[string]any{"name": strings.Repeat("n", 300), "devices": 1,
		"blocks": []any{map[string]any{"id": "f", "kind": "forward", "devices": []int{0}, "time": 1, "memory": 0}}, "deps": []any{}})

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"partition", "--model", model, "--devices", "4611686018427387904"}, "limit of 4096"},
		{[]string{"partition", "--model", model, "--devices", "1000000000"}, "limit of 4096"},
		{[]string{"partition", "--model", model, "--devices", "100000000"}, "limit of 4096"},
		{[]string{"partition", "--model", huge}, "4611686018427387904 accelerators is more than tessel's limit of 4096"},
		{[]string{"plan", "--model", huge}, "4611686018427387904 accelerators is more than tessel's limit of 4096"},
		{[]string{"partition", "--model", deep}, "20000 layers is more than tessel's limit of 16384"},
		{[]string{"search", "--placement-file", wide}, "70000 blocks is more than tessel's limit of 65536"},
		{[]string{"search", "--placement-file", longName}, "300 bytes in the placement name is more than tessel's limit of 256"},
		{[]string{"verify", "-s", "/dev/zero"}, "invalid character '\\x00'"},
		{[]string{"search", "-d", "4611686018427387904"}, "limit of 4096"},
		{[]string{"search", "-n", "2000000"}, "2000000 micro-batches is more than tessel's limit of 1048576"},
		{[]string{"search", "-d", "4096", "-n", "10000"}, "block instances"},
		{[]string{"search", "--nr", "100000"}, "N_R is more than tessel's limit of 1024"},
		{[]string{"search", "--time-limit", "-5s"}, "--time-limit must be at least 0, got -5s"},
		{[]string{"search", "--effort", "-2"}, "--effort must be -1 (no cap), 0 (the default) or a positive cap, got -2"},
		{[]string{"partition", "--model", model, "--chunks", "4611686018427387904"}, "limit of 16"},
		{[]string{"partition", "--model", model, "--memory-unit", "1e-300"}, "memory units of the activations of stage 0 (memory unit 1e-300: a larger --memory-unit) is more than tessel's limit"},
		{[]string{"partition", "--model", model, "--time-unit", "1e-300"}, "a larger --time-unit"},
		{[]string{"partition", "--model", model, "--memory", "NaN"}, "--memory must be a finite number, got NaN"},
	} {
		code, out, errOut := runCLI(t, c.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, out, errOut, c.want)
		}
	}
}

// A block time of 2^61 in an edited program is refused: the simulator's
// sums stay far from overflow (it once reported a false deadlock).
func TestProgramTimesWithinLimits(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, "s.json")
	out := filepath.Join(dir, "run")
	if code, _, errOut := runCLI(t, "search", "-n", "4", "-o", s); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := runCLI(t, "gen", "-s", s, "-o", out); code != 0 {
		t.Fatal(errOut)
	}
	rank := filepath.Join(out, "rank0.json")
	data, _ := os.ReadFile(rank)
	var prog map[string]any
	json.Unmarshal(data, &prog)
	prog["blocks"].([]any)[0].(map[string]any)["time"] = 1 << 61
	data, _ = json.Marshal(prog)
	os.WriteFile(rank, data, 0o644)
	code, stdout, errOut := runCLI(t, "simulate", "--programs", out)
	if code != 2 || stdout != "" || !strings.Contains(errOut, "time must be in 1..1000000, got 2305843009213693952") {
		t.Errorf("a block time of 2^61: exit %d, %q, %q", code, stdout, errOut)
	}
}

// A placement name with ESC and BEL prints escaped wherever tessel prints
// it to a terminal: search, verify, render.
func TestNamesPrintEscaped(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile("../../testdata/placements/v-shape.json")
	var p map[string]any
	json.Unmarshal(data, &p)
	p["name"] = "v\x1b]0;pwned\a\x1b[31m-shape"
	data, _ = json.Marshal(p)
	pf := filepath.Join(dir, "esc.json")
	os.WriteFile(pf, data, 0o644)
	s := filepath.Join(dir, "s.json")
	for _, args := range [][]string{
		{"search", "--placement-file", pf, "-n", "4", "-o", s},
		{"verify", "-s", s},
		{"render", "-s", s},
		{"search", "--placement-file", pf, "-n", "4", "--json"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if strings.ContainsAny(out+errOut, "\x1b\a") {
			t.Errorf("%v: a raw ESC or BEL reached the terminal", args)
		}
		if !strings.Contains(out, `v\x1b]0;pwned\a\x1b[31m-shape`) && !strings.Contains(out, `v\u001b]0;pwned\u0007\u001b[31m-shape`) {
			t.Errorf("%v: the name is not shown escaped:\n%s", args, out)
		}
	}
}

// A path with newlines and Python code, as the torchtitan bundle's
// folder, stays one Python string: every line of the settings file is a
// comment, blank, the one function or inside it (torchcsv's
// TestTitanHostileStrings runs such files through Python).
func TestTorchtitanPathStaysInItsString(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, "s.json")
	if code, _, errOut := runCLI(t, "search", "-n", "8", "-o", s); code != 0 {
		t.Fatal(errOut)
	}
	out := filepath.Join(dir, "tt\n[evil]\nimport os; os.system('id')\n#")
	if code, _, errOut := runCLI(t, "export", "-s", s, "-f", "torchtitan", "-o", out); code != 0 {
		t.Fatal(errOut)
	}
	py, err := os.ReadFile(filepath.Join(out, torchcsv.TitanSettingsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(py), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && line != "def tessel_pipeline(config):" && !strings.HasPrefix(line, "    ") {
			t.Errorf("a line outside the function and the comments: %q", line)
		}
	}
	want := `    config.parallelism.pipeline_parallel_schedule_csv = "` + strings.ReplaceAll(filepath.Join(dir, "tt"), `\`, `\\`) + `\n[evil]\nimport os; os.system('id')\n#/schedule.csv"` + "\n"
	if !bytes.Contains(py, []byte(want)) {
		t.Errorf("the CSV's path is not one escaped string:\n%s", py)
	}
}
