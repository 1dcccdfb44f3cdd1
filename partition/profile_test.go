package partition

import (
	"bytes"
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func loadModel(t testing.TB, name string) *Graph {
	t.Helper()
	g, err := Load(filepath.Join("..", "testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestProfileGraph(t *testing.T) {
	g := loadModel(t, "gpt-like.json")
	if g.Name != "gpt-like" || g.Accelerators != 4 || g.Memory != 24 || !g.Training() {
		t.Fatalf("graph %q, %d devices, memory %v, training %v", g.Name, g.Accelerators, g.Memory, g.Training())
	}
	// 12 layers: a forward and a backward node each; 11 chain edges each
	// way and one from every forward to its backward.
	if len(g.Nodes) != 24 || len(g.Edges) != 11+11+12 {
		t.Fatalf("%d nodes, %d edges", len(g.Nodes), len(g.Edges))
	}
	if e := g.Nodes[0]; e.Name != "embed" || e.Acc != 3.4 || e.Size != 13 || e.Class != 0 {
		t.Errorf("embed forward %+v", e)
	}
	if b := g.Nodes[12]; !b.Backward || b.Acc != 6.8 || b.Class != 0 || b.Size != 0 {
		t.Errorf("embed backward %+v", b)
	}
	s := loadModel(t, "gpt-like-split.json")
	if b := s.Nodes[13]; b.Acc != 2 || b.Input != 1 || b.Weight != 1 {
		t.Errorf("block1 backward of the split profile %+v", b)
	}
}

// Every bad model in testdata/bad-models fails to load with one line that
// names the problem.
func TestBadModels(t *testing.T) {
	want := map[string]string{
		"backward-and-split.json":      `give "backward" or "input" and "weight", not both`,
		"both-formats.json":            "want a layer profile",
		"cycle.json":                   `cycle "a" -> "b" -> "a"`,
		"duplicate-layer.json":         `name "a" already used by layers[0]`,
		"empty.json":                   "empty input",
		"input-without-weight.json":    `give both "input" and "weight"`,
		"malformed.json":               "malformed JSON",
		"missing-forward.json":         `missing field "forward"`,
		"mixed-backward.json":          "has no backward time",
		"negative-devices.json":        `field "devices": want ≥ 0`,
		"negative-time.json":           "forward time -1: want > 0",
		"no-layers.json":               "no layers",
		"not-object.json":              "want a model object, got an array",
		"seed-bad-flag.json":           "supportedOnFpga 2: want 0 or 1",
		"seed-duplicate-id.json":       "id 1 already used",
		"seed-fractional-devices.json": `"maxFPGAs": want a whole number`,
		"seed-unknown-id.json":         "unknown destId 7",
		"trailing.json":                "trailing data after the model object at line 1, column 43",
		"unknown-edge.json":            `unknown layer "b"`,
		"unknown-field.json":           `unknown field "backwards"`,
		"wrong-type.json":              `field "forward": want a number, got a string`,
		// Byte sizes (the memory model from profile to schedule).
		"bytes-and-units.json":              `"params" and "activations" do not go with "device_bytes"`,
		"bytes-without-device-bytes.json":   `byte sizes need "device_bytes" at the top of the profile`,
		"bytes-wrong-type.json":             `field "activation_bytes": want a number, got a string`,
		"checkpoint-over-activation.json":   "checkpoint_bytes 200: more than activation_bytes 100",
		"device-bytes-and-memory.json":      `give "device_bytes" or "memory", not both`,
		"host-bandwidth-without-bytes.json": `field "host_bandwidth": needs "device_bytes"`,
		"negative-bytes.json":               "param_bytes -5: want a finite number ≥ 0",
		"negative-host-bandwidth.json":      `field "host_bandwidth": want a finite number > 0, got -1`,
		"zero-device-bytes.json":            `field "device_bytes": want a finite number > 0, got 0`,
		// Per-device costs (tessel partition --cluster).
		"negative-flops.json":           "flops -3: want a finite number ≥ 0",
		"device-times-no-forward.json":  `field "device_times": field "v100": missing field "forward"`,
		"device-times-no-backward.json": `device_times: "v100": no backward time for a layer with one`,
		"device-times-not-object.json":  `field "device_times": want an object of device types, got an array`,
		"backward-flops-alone.json":     `"backward_flops" and "backward_memory_access" need "flops" or "memory_access"`,
		// Units.
		"time-unit-unknown.json":      `field "time_unit": unknown time unit "min" (want one of ns, us, µs, ms, s)`,
		"time-unit-type.json":         `field "time_unit": want a string, got a number`,
		"memory-unit-unknown.json":    `field "memory_unit": unknown memory unit "gigabytes" (want one of B, kB, KiB, MB, MiB, GB, GiB, TB, TiB)`,
		"memory-unit-with-bytes.json": `field "memory_unit": a profile in bytes ("device_bytes") is in bytes: give no memory unit`,
		// Measured profiles (tessel profile) and their calibration.
		"profile-time-unit.json":                 `field "profile": field "time_unit": "s": want "ms"`,
		"profile-no-config.json":                 `field "profile": field "config": a decoder's profile needs its config`,
		"profile-bad-config.json":                `field "profile": field "config": decoder config: hidden 8 is not a multiple of heads 3`,
		"spread-reversed.json":                   `field "spread": field "forward": [2, 1]: want 0 ≤ lo ≤ hi`,
		"spread-wrong-pass.json":                 `spread: "input": the layer has no input time`,
		"calibration-zero-scale.json":            `field "calibration": field "scale": field "forward": 0: want a scale in (0, 1e6]`,
		"calibration-negative.json":              `field "calibration": field "transfer": -1: want a finite time ≥ 0`,
		"output-bytes-without-device-bytes.json": `field "output_bytes": byte sizes need "device_bytes"`,
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "bad-models", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		g, err := Load(f)
		if name == "seed-too-big.json" {
			// Loads; no split fits its memory.
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Contiguous(context.Background(), g, DPOptions{}); err == nil || !strings.Contains(err.Error(), "no contiguous split fits") {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: loaded", name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, f+": ") {
			t.Errorf("%s: error %q is not one line starting with the path", name, msg)
		}
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no expected message (got %q)", name, msg)
		} else if !strings.Contains(msg, w) {
			t.Errorf("%s: error %q, want it to say %q", name, msg, w)
		}
	}
	if len(files) != len(want)+1 {
		t.Errorf("%d bad models, %d expected messages", len(files), len(want))
	}
}

// The placement of the GPT-like profile's DP split, byte for byte: the
// embedding alone on device 0, times in half-units (AutoTimeUnit), a
// forward → backward dependency per stage.
func TestPlacementGolden(t *testing.T) {
	for _, c := range []struct{ model, golden string }{
		{"gpt-like.json", "gpt-like.placement.json"},
		{"gpt-like-split.json", "gpt-like-split.placement.json"},
		{"branches.json", "branches.placement.json"},
	} {
		g := loadModel(t, c.model)
		r, err := Contiguous(context.Background(), g, DPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := ToPlacement(r.Split, PlacementOptions{Name: g.Name})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := conv.Placement.Write(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", c.golden)
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s: placement differs from %s:\n%s", c.model, path, buf.String())
		}
		if _, err := placement.Parse(buf.Bytes()); err != nil {
			t.Errorf("%s: the written placement does not load: %v", c.model, err)
		}
	}
}

// A profile that splits the backward gives input and weight blocks: the
// weight block after its own input block, the previous stage's input
// block after this one's input block only, memory +1 / 0 / −1.
func TestPlacementSplitBackward(t *testing.T) {
	g := loadModel(t, "gpt-like-split.json")
	r, err := Contiguous(context.Background(), g, DPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := ToPlacement(r.Split, PlacementOptions{Step: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	p := conv.Placement
	id := map[string]int{}
	for i, b := range p.Blocks {
		id[b.ID] = i
	}
	count := map[placement.Kind]int{}
	for _, b := range p.Blocks {
		count[b.Kind]++
		want := map[placement.Kind]int{placement.Forward: 1, placement.Input: 0, placement.Weight: -1}[b.Kind]
		if b.Memory != want {
			t.Errorf("%s: memory %d, want %d", b.ID, b.Memory, want)
		}
	}
	if count[placement.Forward] != 4 || count[placement.Input] != 4 || count[placement.Weight] != 4 || count[placement.Backward] != 0 {
		t.Fatalf("blocks by kind %v", count)
	}
	has := map[[2]int]bool{}
	for _, d := range p.Deps {
		has[[2]int{d.From, d.To}] = true
	}
	for s := range 4 {
		if !has[[2]int{id[name('i', s)], id[name('w', s)]}] {
			t.Errorf("no dependency i%d -> w%d", s, s)
		}
		if s > 0 && !has[[2]int{id[name('i', s)], id[name('i', s-1)]}] {
			t.Errorf("no dependency i%d -> i%d", s, s-1)
		}
		for _, d := range p.Deps {
			if d.From == id[name('w', s)] {
				t.Errorf("w%d has a successor %s: nothing waits for a weight gradient", s, p.Blocks[d.To].ID)
			}
		}
	}
	// embed: input 3.4 → 7 half-units, weight 3.4 → 7.
	if b := p.Blocks[id["i0"]]; b.Time != 7 {
		t.Errorf("i0 time %d, want 7", b.Time)
	}
}

func name(k byte, s int) string { return string(k) + string(rune('0'+s)) }

// A non-contiguous split becomes an acyclic placement: a device's nodes
// are cut into phases where a path leaves the device and comes back.
func TestPlacementNonContiguous(t *testing.T) {
	g := &Graph{Accelerators: 2, Nodes: []Node{
		{Name: "a", Acc: 1, Class: -1}, {Name: "b", Acc: 1, Class: -1}, {Name: "c", Acc: 1, Class: -1},
	}, Edges: [][2]int{{0, 1}, {1, 2}}}
	s, err := NewSplit(g, []int{0, 1, 0}) // a and c on 0, b on 1
	if err != nil {
		t.Fatal(err)
	}
	if s.Contiguous {
		t.Fatal("{a, c} counted as contiguous")
	}
	conv, err := ToPlacement(s, PlacementOptions{TimeUnit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(conv.Placement.Blocks); n != 3 {
		t.Fatalf("%d blocks, want 3 (a and c apart)", n)
	}
}

func TestAutoTimeUnit(t *testing.T) {
	for _, c := range []struct {
		ts   []float64
		want float64
	}{
		{[]float64{1, 2, 3}, 1},
		{[]float64{3.4, 4, 3}, 0.5}, // 3 → 6, 3.4 → 7 (2.9%), 4 → 8
		{[]float64{0, 2}, 2},
		{nil, 1},
	} {
		if got := AutoTimeUnit(c.ts); got != c.want {
			t.Errorf("AutoTimeUnit(%v) = %v, want %v", c.ts, got, c.want)
		}
	}
}

// LoadWith applies the overrides and checks what a split needs, in the
// words of tessel partition's flags.
func TestLoadWith(t *testing.T) {
	path := filepath.Join("..", "testdata", "dnn-partitioning", "layer", "bert24_inference.json")
	mem := 5.0
	g, err := LoadWith(path, Overrides{Devices: 3, CPUs: 2, Memory: &mem})
	if err != nil {
		t.Fatal(err)
	}
	if g.Accelerators != 3 || g.CPUs != 2 || g.Memory != 5 {
		t.Errorf("k %d, ℓ %d, cap %v; want 3, 2, 5", g.Accelerators, g.CPUs, g.Memory)
	}
	bad := -1.0
	for _, c := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{Devices: -1, CPUs: -1}, "--devices must be at least 1"},
		{Overrides{CPUs: -2}, "--cpus must be at least 0"},
		{Overrides{CPUs: -1, Memory: &bad}, "--memory must be a finite number ≥ 0"},
	} {
		if _, err := LoadWith(path, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
}

// A model file of tessel profile loads with how it was measured and each
// layer's spread; a calibration scales each pass's times as the file is
// read, adds its transfer time to every layer's comm, and its time per
// action to every block of the placement.
func TestProfileAndCalibration(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "models", "decoder-cpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if g.Profile == nil || g.Profile.Config == nil || g.Profile.Config.Layers != 8 || g.Profile.TimeUnit != "ms" || g.Calibration != nil {
		t.Fatalf("profile %+v, calibration %+v", g.Profile, g.Calibration)
	}
	// Its times are in the profile's ms: the reports print the unit.
	if g.TimeUnit != "ms" {
		t.Errorf("time unit %q, want the profile's ms", g.TimeUnit)
	}
	if _, err := Parse(bytes.Replace(data, []byte(`"name": "decoder-8x128",`), []byte(`"name": "decoder-8x128", "time_unit": "s",`), 1)); err == nil ||
		!strings.Contains(err.Error(), `"time_unit": "s", but "profile" says its times are in ms`) {
		t.Errorf("a top-level unit other than the profile's: error %v", err)
	}
	if len(g.Spreads) != 10 || g.Spreads[1]["forward"][0] > g.Nodes[1].Acc || g.Spreads[1]["forward"][1] < g.Nodes[1].Acc {
		t.Fatalf("spreads %v: want 10 layers, decoder.0's forward %v inside its spread", g.Spreads, g.Nodes[1].Acc)
	}
	cal := &profile.Calibration{Scale: map[string]float64{"forward": 2, "weight": 0.5}, Transfer: 0.25, ActionOverhead: 3}
	data2, err := profile.SetCalibration(data, cal)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Parse(data2)
	if err != nil {
		t.Fatal(err)
	}
	n := len(g.Nodes) / 2
	for i := range n {
		f, b := g.Nodes[i], g.Nodes[n+i]
		hf, hb := h.Nodes[i], h.Nodes[n+i]
		if math.Abs(hf.Acc-2*f.Acc) > 1e-9 || math.Abs(hb.Input-b.Input) > 1e-9 || math.Abs(hb.Weight-b.Weight/2) > 1e-9 ||
			math.Abs(hf.Comm-f.Comm-0.25) > 1e-9 {
			t.Fatalf("layer %s: forward %v → %v, input %v → %v, weight %v → %v, comm %v → %v", f.Name, f.Acc, hf.Acc,
				b.Input, hb.Input, b.Weight, hb.Weight, f.Comm, hf.Comm)
		}
	}
	if h.ActionOverhead != 3 {
		t.Fatalf("action overhead %v, want 3", h.ActionOverhead)
	}
	// The overhead lands on every block: with steps of 1 (the search's
	// and the placement's), each block is 3 steps longer than without (the loads are the same).
	for _, gr := range []*Graph{g, h} {
		gr.Accelerators = 2
	}
	split, err := Contiguous(context.Background(), g, DPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ToPlacement(split.Split, PlacementOptions{TimeUnit: 1, Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	g.ActionOverhead = 3
	over, err := ToPlacement(split.Split, PlacementOptions{TimeUnit: 1, Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range plain.Placement.Blocks {
		if d := over.Placement.Blocks[i].Time - b.Time; d != 3 {
			t.Errorf("block %s: %d steps with the overhead, %d without", b.ID, over.Placement.Blocks[i].Time, b.Time)
		}
	}
	// Setting the calibration again replaces it, every other field byte
	// for byte.
	data3, err := profile.SetCalibration(data2, &profile.Calibration{Transfer: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data3), `"calibration"`) != 1 || !strings.Contains(string(data3), `"calibration": {"transfer": 1, "action_overhead": 0}`) {
		t.Errorf("calibration not replaced:\n%s", data3)
	}
	back, err := profile.SetCalibration(data, &profile.Calibration{Transfer: 1})
	if err != nil || string(back) != string(data3) {
		t.Errorf("setting the calibration twice differs from once (%v)", err)
	}
}
