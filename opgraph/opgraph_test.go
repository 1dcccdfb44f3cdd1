package opgraph

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// §V-B of She et al.: 200 operators, in- and out-degree at most 3, and a
// fixed seed gives the same graph.
func TestRandomShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"paper", Options{Seed: 1}},
		{"seed 7", Options{Seed: 7}},
		{"narrow", Options{Seed: 3, Nodes: 50, Width: 2}},
		{"one", Options{Nodes: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Random(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			o := tc.o.Defaults()
			if len(g.Times) != o.Nodes {
				t.Fatalf("%d operators, want %d", len(g.Times), o.Nodes)
			}
			in, out := make([]int, o.Nodes), make([]int, o.Nodes)
			for _, e := range g.Edges {
				if e.From >= e.To {
					t.Fatalf("edge %d -> %d goes backwards", e.From, e.To)
				}
				if e.Size < o.MinSize || e.Size > o.MaxSize {
					t.Fatalf("size %d out of range", e.Size)
				}
				in[e.To]++
				out[e.From]++
			}
			for v := range in {
				if in[v] > o.MaxDegree || out[v] > o.MaxDegree {
					t.Fatalf("operator %d: in %d, out %d > %d", v, in[v], out[v], o.MaxDegree)
				}
				if g.Times[v] < o.MinTime || g.Times[v] > o.MaxTime {
					t.Fatalf("operator %d: time %d out of range", v, g.Times[v])
				}
			}
			again, _ := Random(tc.o)
			if len(again.Edges) != len(g.Edges) || again.Sum() != g.Sum() {
				t.Fatal("the same options gave another graph")
			}
		})
	}
}

func TestGenerateGolden(t *testing.T) {
	p, err := Generate(Options{Nodes: 16, Seed: 1, Width: 3})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	const path = "testdata/dag-16-s1.json"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("got\n%s\nwant\n%s", b.Bytes(), want)
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{{Nodes: -1}, {Nodes: MaxNodes + 1}, {MinTime: 5, MaxTime: 2}, {MaxDegree: 65}, {Devices: -3}} {
		if _, err := Random(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestSeedsDiffer(t *testing.T) {
	a, _ := Random(Options{Seed: 1})
	b, _ := Random(Options{Seed: 2})
	if a.Sum() == b.Sum() && len(a.Edges) == len(b.Edges) {
		t.Fatal("seeds 1 and 2 gave graphs of the same sum and edge count")
	}
}

// Summary is tessel gen-dag's line: docs/operator-placement.md's figures
// for the graph of 200 operators, seed 1, on 2 devices.
func TestSummary(t *testing.T) {
	p, err := Generate(Options{Nodes: 200, Seed: 1, Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Summary(p), "dag-200-s1: 200 operators, 392 dependencies, 2 devices; one device takes 985\n"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}
