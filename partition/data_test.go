package partition

import (
	"os"
	"path/filepath"
	"testing"
)

// seedData returns the folder of the published graphs of Tarnawski et al.
// (dnn-partitioning, in a data folder beside the repository root or any
// folder above this package), as CI lays out a fresh clone. It skips the test when there is none.
func seedData(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "data", "dnn-partitioning")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skip("the published graphs of Tarnawski et al. (dnn-partitioning) are not above the package")
		}
		dir = up
	}
}

func loadSeed(t testing.TB, rel string) *Graph {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(seedData(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	g, err := ParseGraph(data)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return g
}
