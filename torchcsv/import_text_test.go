package torchcsv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ImportText describes an imported 1F1B (4 ranks, 4 stages) and Stages
// counts the stage ids of its table.
func TestImportText(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "1f1b.csv"))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Stages(); got != len(tab.Rows) {
		t.Errorf("Stages = %d, want %d (one stage per rank)", got, len(tab.Rows))
	}
	s, err := Import(tab, DefaultImportOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := ImportText("1f1b.csv", s)
	for _, want := range []string{"imported 1f1b.csv: 4 ranks, 4 stages, ", "(budget unlimited), verified\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("ImportText = %q, want it to hold %q", got, want)
		}
	}
}
