package partition

import (
	"context"
	"strings"
	"testing"
)

// A profile states its units; a layer that looks like another unit than
// the others (a time in seconds among times in milliseconds, a size in GB
// given as bytes) gets a warning, and the profile is used as given.
func TestUnitWarnings(t *testing.T) {
	g, err := Parse([]byte(`{"time_unit": "ms", "memory_unit": "GB", "memory": 80, "layers": [
		{"name": "embed", "forward": 0.05, "backward": 0.1, "params": 2, "activations": 0.1},
		{"name": "l0", "forward": 5, "backward": 10, "params": 3, "activations": 0.5},
		{"name": "l1", "forward": 0.005, "backward": 10, "params": 3, "activations": 0.5},
		{"name": "l2", "forward": 5, "backward": 0.01, "params": 3, "activations": 0.5},
		{"name": "head", "forward": 3, "backward": 6, "params": 2, "activations": 0.6}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if g.TimeUnit != "ms" || g.MemoryUnit != "GB" || g.MemoryUnitBytes() != 1e9 {
		t.Errorf("units %q %q %g", g.TimeUnit, g.MemoryUnit, g.MemoryUnitBytes())
	}
	ws := UnitWarnings(g)
	if len(ws) != 2 || !strings.Contains(ws[0], `layer "l1": forward 0.005 is 600× shorter than the median layer's 3 (ms)`) ||
		!strings.Contains(ws[1], `layer "l2": backward 0.01 is 600× shorter than the median layer's 6 (ms)`) {
		t.Errorf("warnings %q", ws)
	}
	// The embedding, a hundred times shorter, is no other unit.
	for _, w := range ws {
		if strings.Contains(w, "embed") {
			t.Errorf("warning on the embedding: %q", w)
		}
	}
	// The Llama-7B-like profile is in ms and bytes throughout.
	llama, err := Load("../testdata/models/llama7b.json")
	if err != nil {
		t.Fatal(err)
	}
	if ws := UnitWarnings(llama); len(ws) != 0 || llama.TimeUnit != "ms" || !llama.Bytes || llama.MemoryUnitBytes() != 1 {
		t.Errorf("llama7b: warnings %q, unit %q", ws, llama.TimeUnit)
	}
	if got := llama.FormatTime(69); got != "69.00 ms" {
		t.Errorf("69 ms written %q", got)
	}
	// A size in GB given as bytes.
	b, err := Parse([]byte(`{"device_bytes": 80, "layers": [{"name": "a", "forward": 1, "backward": 2, "param_bytes": 0.8, "activation_bytes": 2.3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ws := UnitWarnings(b); len(ws) != 3 || !strings.Contains(ws[0], "device_bytes 80: under a megabyte") {
		t.Errorf("byte warnings %q", ws)
	}
}

// --chunks never changes a device's capacity: a chunked split bounds
// each stage by a part of it, but the memory model gives each device the
// whole of it, and the chunked split's budgets are no smaller than the
// unchunked split's.
func TestChunksKeepBudgets(t *testing.T) {
	g, err := Load("../testdata/models/llama7b.json")
	if err != nil {
		t.Fatal(err)
	}
	budgets := map[int][]DeviceMemory{}
	for _, chunks := range []int{1, 2, 4} {
		pr, err := Run(context.Background(), g, Options{Chunks: chunks})
		if err != nil {
			t.Fatalf("%d chunks: %v", chunks, err)
		}
		mem, err := pr.Converted.Memory(pr.Split, nil)
		if err != nil || len(mem) != 8 {
			t.Fatalf("%d chunks: %v, %d devices", chunks, err, len(mem))
		}
		for _, m := range mem {
			if m.Capacity != g.Memory {
				t.Errorf("%d chunks: device %d capacity %g, want the model's %g", chunks, m.Device, m.Capacity, g.Memory)
			}
		}
		budgets[chunks] = mem
	}
	for d := range budgets[1] {
		if one, two := budgets[1][d], budgets[2][d]; two.Free < one.Free*0.99 {
			t.Errorf("device %d: %g free with 2 chunks, %g with 1", d, two.Free, one.Free)
		}
	}
}
