package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A model that states its units gets them in every command's output: the
// figures of plan, verify, simulate, render (text, SVG, HTML) and compare
// are in ms, s and GB, and --json carries the steps and the units both.
// The files are the Llama-7B-like profile of testdata.
func TestLlamaUnits(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join("..", "..", "testdata", "models", "llama7b.json")
	cl := filepath.Join("..", "..", "testdata", "clusters", "llama-8x80.json")
	s, p, c := filepath.Join(dir, "s.json"), filepath.Join(dir, "p.json"), filepath.Join(dir, "c.json")
	code, out, errOut := runCLI(t, "plan", "--model", model, "--cluster", cl, "-n", "16", "--out", s, "--placement-out", p)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("plan: stderr %q (no unit warnings on the profile)", errOut)
	}
	// A time is a number and a unit; a memory a number and GB or MB.
	timeRe := `[0-9.]+ (s|ms|µs)`
	memRe := `[0-9.]+ (GB|MB)`
	lines := map[string]string{
		"time per sample": `^time per sample  ` + timeRe + ` \(the even split by layer count: ` + timeRe,
		"schedule":        `^schedule     16 micro-batches: makespan ` + timeRe + `, bubble rate [0-9.]+% \(lower bound ` + timeRe + `\)$`,
		"steady state":    `^steady state .*; ` + timeRe + ` per micro-batch \(the split's max load ` + timeRe + `\)$`,
		"timed":           `^timed        every block and transfer at its own time, in steps of 2 µs`,
		"peak memory":     `^peak memory  \[` + memRe + `(, ` + memRe + `)*\] \(budget \[` + memRe,
		"search time":     `^search time  .* on steps of 3 ms \(proven at steps of 3 ms: `,
		"max load":        `^max load       ` + timeRe + ` per sample`,
	}
	for what, re := range lines {
		if !regexp.MustCompile("(?m)" + re).MatchString(out) {
			t.Errorf("plan: no %s line like %q in\n%s", what, re, out)
		}
	}
	if regexp.MustCompile(`(?m)^(schedule|peak memory|time per sample) .*\b[0-9]+ steps =`).MatchString(out) {
		t.Errorf("plan: a figure in steps:\n%s", out)
	}

	code, out, errOut = runCLI(t, "verify", "-s", s)
	if code != 0 || !regexp.MustCompile(`^valid on its cluster: llama7b, 16 micro-batches, makespan `+timeRe+` \([0-9]+ steps of 2 µs\), bubble rate [0-9.]+%, peak memory \[`+memRe+`.*\] \(budget \[`+memRe).MatchString(out) {
		t.Errorf("verify: exit %d %q %s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "simulate", "-s", s)
	if code != 0 || !regexp.MustCompile(`(?m)^non-blocking +`+timeRe+` +[0-9.]+% +\[`+timeRe).MatchString(out) ||
		!strings.Contains(out, ", schedule makespan ") {
		t.Errorf("simulate: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "simulate", "-s", s, "--json")
	var sim struct {
		Runs  []struct{ Makespan int }
		Units struct {
			Time      string
			Makespans []float64
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &sim) != nil || sim.Units.Time != "ms" || len(sim.Units.Makespans) != 2 ||
		sim.Units.Makespans[0] != float64(sim.Runs[0].Makespan)*0.002 && sim.Units.Makespans[0]-float64(sim.Runs[0].Makespan)*0.002 > 1e-6 {
		t.Errorf("simulate --json: exit %d %+v %s", code, sim, errOut)
	}
	code, out, errOut = runCLI(t, "render", "-s", s)
	if code != 0 || !regexp.MustCompile(`^llama7b: 8 devices, 16 micro-batches, memory \[`+memRe+`.*\], makespan `+timeRe+`, bubble rate`).MatchString(out) ||
		!strings.Contains(out, "\ntime (ms) 0 ") || !strings.Contains(out, "drawn at 3 ms a cell") {
		t.Errorf("render: exit %d\n%s%s", code, out, errOut)
	}
	for _, f := range []struct{ format, want string }{
		{"svg", `text-anchor="end">ms</text>`},
		{"html", `<tr><th>makespan</th><td>`},
		// f0 takes 20.05 ms; f1 starts after it and the 0.17 ms hop.
		{"trace", `{"name":"f1^0","cat":"forward","ph":"X","ts":20220,"dur":20000,`},
	} {
		code, out, errOut = runCLI(t, "render", "-s", s, "--format", f.format)
		if code != 0 || !strings.Contains(out, f.want) || f.format != "trace" && !regexp.MustCompile(`makespan `+timeRe+`|<td>`+timeRe+`</td>`).MatchString(out) {
			t.Errorf("render --format %s: exit %d, no %q or no time: %.300s %s", f.format, code, f.want, out, errOut)
		}
	}

	// compare on the placement plan wrote, on its cluster.
	if code, _, errOut := runCLI(t, "partition", "--model", model, "--cluster", cl, "--cluster-out", c); code != 0 {
		t.Fatalf("partition: exit %d: %s", code, errOut)
	}
	code, out, errOut = runCLI(t, "compare", "--placement-file", p, "--cluster", c, "-n", "16", "--format", "csv")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	code, text, _ := runCLI(t, "compare", "--placement-file", p, "--cluster", c, "-n", "16", "--format", "markdown")
	for _, row := range strings.Split(strings.TrimSpace(text), "\n")[2:] {
		cells := strings.Split(row, "|")
		if len(cells) < 8 || strings.Contains(cells[5], "×") || strings.TrimSpace(cells[5]) == "-" {
			continue
		}
		if !regexp.MustCompile(`^ *`+timeRe+` *$`).MatchString(cells[5]) || !regexp.MustCompile(`^ *\[`+memRe).MatchString(cells[7]) {
			t.Errorf("compare: a row without units: %s", row)
		}
	}
	if code != 0 || !strings.Contains(text, "| Tessel ") {
		t.Errorf("compare: exit %d\n%s", code, text)
	}
	_ = out

	// --json: the steps and the units both.
	code, out, errOut = runCLI(t, "plan", "--model", model, "--cluster", cl, "-n", "16", "--json")
	var pj struct {
		TimeUnit     string  `json:"time_unit"`
		MakespanTime float64 `json:"makespan_time"`
		Schedule     struct {
			Makespan int `json:"makespan"`
			Units    struct {
				Time            string    `json:"time"`
				Step            float64   `json:"step"`
				SearchStep      int       `json:"search_step"`
				Makespan        float64   `json:"makespan"`
				PeakMemoryBytes []float64 `json:"peak_memory_bytes"`
			} `json:"units"`
		} `json:"schedule"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &pj) != nil {
		t.Fatalf("plan --json: exit %d: %s", code, errOut)
	}
	u := pj.Schedule.Units
	if pj.TimeUnit != "ms" || u.Time != "ms" || u.Step != 0.002 || u.SearchStep != 1500 || len(u.PeakMemoryBytes) != 8 ||
		u.Makespan != pj.MakespanTime || u.Makespan < float64(pj.Schedule.Makespan)*0.002-1e-6 || u.Makespan > float64(pj.Schedule.Makespan)*0.002+1e-6 {
		t.Errorf("plan --json: %+v", pj)
	}
	// The placement file says what its integers are.
	data, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(data), `"units": {"time": "ms", "step": 0.002, "search_step": 1500, "memory_bytes": 6.7108864e+07}`) {
		t.Errorf("placement file: %v\n%s", err, data)
	}
}

// A profile that gives one layer in seconds among layers in milliseconds
// is planned as given, with a warning on stderr naming the layer.
func TestUnitWarning(t *testing.T) {
	model := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(model, []byte(`{"time_unit": "ms", "devices": 2, "layers": [
		{"name": "a", "forward": 5, "backward": 10}, {"name": "b", "forward": 0.005, "backward": 10},
		{"name": "c", "forward": 5, "backward": 10}, {"name": "d", "forward": 5, "backward": 10}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "partition", "--model", model)
	if code != 0 || errOut != `tessel: warning: `+model+`: layer "b": forward 0.005 is 1000× shorter than the median layer's 5 (ms): a time in another unit?`+"\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
