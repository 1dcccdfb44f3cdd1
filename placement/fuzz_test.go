package placement

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/fuzzcorpus"
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

// TestFuzzCorpus checks that the seed corpus holds every file of
// ../testdata/placements and ../testdata/bad; -update rewrites it.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParse"), []string{placementsDir, badDir}, *update, "./placement")
}
