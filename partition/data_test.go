package partition

import (
	"os"
	"path/filepath"
	"testing"
)

// paperData is the folder of Tarnawski et al.'s published graphs, shipped
// with the repository (testdata/dnn-partitioning, MIT licensed).
const paperData = "../testdata/dnn-partitioning"

// loadPaper reads one of those graphs by its path under paperData.
func loadPaper(t testing.TB, rel string) *Graph {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(paperData, rel))
	if err != nil {
		t.Fatal(err)
	}
	g, err := ParseGraph(data)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return g
}
