package torchcsv

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no input panics; a parsed table writes and reads back to
// itself; a valid one imports (or is refused with an error), and the
// import exports back to the same table: Import keeps every rank's order.
// Seeds: every CSV of testdata, good and bad.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/*.csv", "testdata/bad/*.csv"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("0F0,0I0,0W0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Parse(data)
		if err != nil {
			return
		}
		out := tab.Marshal()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(t)) failed: %v\n%q", err, out)
		}
		if string(again.Marshal()) != string(out) {
			t.Fatalf("Marshal is not stable:\n%q\n%q", out, again.Marshal())
		}
		if _, err := Validate(tab); err != nil {
			return
		}
		s, err := Import(tab, DefaultImportOptions())
		if err != nil {
			return
		}
		back, err := Export(s)
		if err != nil {
			t.Fatalf("export of an import: %v\n%q", err, out)
		}
		if string(back.Marshal()) != string(out) {
			t.Fatalf("export(import(t)) differs from t:\n%q\n%q", back.Marshal(), out)
		}
	})
}
