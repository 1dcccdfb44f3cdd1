package torchcsv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

// parseFile is the table of testdata/name.
func parseFile(t *testing.T, name string) *Table {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// ImportText describes an imported 1F1B (4 ranks, 4 stages) and Stages
// counts the stage ids of its table.
func TestImportText(t *testing.T) {
	tab := parseFile(t, "1f1b.csv")
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

// ImportOptions.Check refuses times and memories out of the placement's
// range, naming the flag.
func TestImportOptionsCheck(t *testing.T) {
	if err := DefaultImportOptions().Check(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for _, c := range []struct {
		change func(*ImportOptions)
		want   string
	}{
		{func(o *ImportOptions) { o.BackwardTime = 0 }, "--backward-time must be in 1.."},
		{func(o *ImportOptions) { o.WeightTime = placement.MaxTime + 1 }, "--weight-time must be in 1.."},
		{func(o *ImportOptions) { o.InputMemory = -placement.MaxMemory - 1 }, "--input-memory must be in -"},
	} {
		o := DefaultImportOptions()
		c.change(&o)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// ExportCSV writes the compute-only table, or the compute_comms form
// with comms, and names the form.
func TestExportCSV(t *testing.T) {
	tab := parseFile(t, "1f1b.csv")
	s, err := Import(tab, DefaultImportOptions())
	if err != nil {
		t.Fatal(err)
	}
	back, out, form, err := ExportCSV(s, false)
	if err != nil || form != "compute only" || string(out) != string(back.Marshal()) || string(out) != string(tab.Marshal()) {
		t.Errorf("compute only: form %q, %v", form, err)
	}
	ct, err := ExportComms(s)
	if err != nil {
		t.Fatal(err)
	}
	_, out, form, err = ExportCSV(s, true)
	if err != nil || form != "compute_comms" || string(out) != string(ct.Marshal()) {
		t.Errorf("compute_comms: form %q, %v", form, err)
	}
}
