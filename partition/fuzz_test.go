package partition

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds the model loader arbitrary bytes: it must return a graph
// that validates or a one-line error, never panic; a small graph that
// loads must also go through the DP and, when it splits, to a placement.
// The seed corpus is testdata/fuzz/FuzzParse plus every model in
// ../testdata/models, ../testdata/bad-models and ../testdata/hetero.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"models", "bad-models", "hetero"} {
		files, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*.json"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if g.Accelerators == 0 {
			g.Accelerators = 2
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("Parse returned a graph that does not validate: %v", err)
		}
		if len(g.Nodes) > 16 || g.Accelerators > 8 || g.CPUs > 4 {
			return // keep each input fast
		}
		r, err := Contiguous(context.Background(), g, DPOptions{})
		if err != nil {
			return
		}
		if !r.Split.Contiguous || !r.Split.Fits() || !r.Split.Colocated {
			t.Fatalf("DP split: contiguous %v, fits %v, colocated %v", r.Split.Contiguous, r.Split.Fits(), r.Split.Colocated)
		}
		c, err := ToPlacement(r.Split, PlacementOptions{})
		if err != nil {
			t.Fatalf("placement of a DP split: %v", err)
		}
		// The memory model: budgets, or one line naming a device.
		mem, err := c.Memory(r.Split, nil)
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
		for _, m := range mem {
			if m.Budget < 0 {
				t.Fatalf("device %d: negative budget %d", m.Device, m.Budget)
			}
		}
	})
}
