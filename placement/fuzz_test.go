package placement

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that its errors are one line,
// and that whatever it accepts is valid and round-trips byte for byte. The
// seed corpus in testdata/fuzz/FuzzParse holds every placement file and bad
// input of ../testdata (TestFuzzCorpus keeps it in step).
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatalf("write: %v", err)
		}
		q, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("written form does not parse: %v\n%s", err, buf.Bytes())
		}
		if !p.Equal(q) {
			t.Fatalf("round trip changed the placement:\n%s", buf.Bytes())
		}
		var again bytes.Buffer
		if err := q.Write(&again); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatalf("second write differs (%v)", err)
		}
		// The graph helpers must work on anything that validates.
		if _, ok := p.Topo(); !ok {
			t.Fatal("valid placement with a cycle")
		}
		_ = p.CriticalPath()
		_ = p.Tails()
		_ = p.MaxLoad()
	})
}

// corpusFile is a seed in the format of go test fuzz v1.
func corpusFile(data []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data)
}

// TestFuzzCorpus checks that the seed corpus holds every file of
// ../testdata/placements and ../testdata/bad; -update rewrites it.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	var files []string
	for _, d := range []string{placementsDir, badDir} {
		fs, err := filepath.Glob(filepath.Join(d, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seed := filepath.Join(dir, filepath.Base(filepath.Dir(path))+"-"+strings.TrimSuffix(filepath.Base(path), ".json"))
		want := corpusFile(data)
		if *update {
			if err := os.WriteFile(seed, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(seed)
		if err != nil {
			t.Errorf("%v (run go test ./placement -update)", err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s out of date (run go test ./placement -update)", seed)
		}
	}
}
