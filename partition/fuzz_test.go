package partition

import (
	"context"
	"math"
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

// graphFrom builds a small graph from fuzz bytes: the node count, the
// devices, each node's times, size, colour class and backward flag, and
// edges from lower to higher nodes (a connected DAG). Every byte string
// gives a graph; those that do not validate are skipped by the caller.
func graphFrom(data []byte) *Graph {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	n := 1 + next()%10
	g := &Graph{Accelerators: 1 + next()%4, CPUs: next() % 3}
	if m := next(); m%2 == 1 {
		g.Memory = float64(2 + m%16)
	}
	for i := range n {
		v := Node{Acc: float64(next() % 10), CPU: float64(next() % 24), Size: float64(next() % 5), Comm: float64(next()%4) / 2, Class: -1}
		switch f := next(); {
		case f%9 == 1:
			v.Acc = math.Inf(1) // CPU only
		case f%9 == 2:
			v.Backward = true
		case f%9 == 3:
			v.Class = i % 2
		case f%9 == 4:
			v.Acc, v.CPU = 0, 0 // idle: mergeIdle's case
		}
		g.Nodes = append(g.Nodes, v)
	}
	for j := 1; j < n; j++ {
		g.Edges = append(g.Edges, [2]int{next() % j, j})
		if e := next(); e%3 == 0 && e%j != g.Edges[len(g.Edges)-1][0] {
			g.Edges = append(g.Edges, [2]int{e % j, j})
		}
	}
	return g
}

// FuzzContiguous runs the DP on small graphs drawn from the fuzz input and
// checks it against the plain DP of §5.1.1 (naiveDP): the same max load
// (none where it finds none), a split that is contiguous, fits and keeps
// classes together, and a placement of it.
func FuzzContiguous(f *testing.F) {
	for _, s := range []string{"", "\x05\x02\x01\x03", "\x09\x03\x02\x07\x01\x02\x03\x00\x04\x05\x06\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b", strings.Repeat("\x07\x03\x02\x01\x09", 12)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := graphFrom(data)
		if g.Validate() != nil {
			return
		}
		want, _ := naiveDP(t, g, true)
		res, err := Contiguous(context.Background(), g, DPOptions{})
		if math.IsInf(want, 1) {
			if err == nil {
				t.Fatalf("Contiguous found max load %v where the plain DP found no split", res.Split.MaxLoad)
			}
			return
		}
		if err != nil {
			t.Fatalf("Contiguous: %v (the plain DP found %v)", err, want)
		}
		s := res.Split
		if !s.Contiguous || !s.Fits() || !s.Colocated {
			t.Fatalf("split: contiguous %v, fits %v, colocated %v", s.Contiguous, s.Fits(), s.Colocated)
		}
		if math.Abs(s.MaxLoad-want) > 1e-9*math.Max(1, want) {
			t.Fatalf("max load %v, the plain DP's %v", s.MaxLoad, want)
		}
		if _, err := ToPlacement(s, PlacementOptions{}); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
	})
}
