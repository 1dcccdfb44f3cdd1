package placement

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"slices"
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
		// The analyses the search starts from: the pairing of gradients
		// with their forwards (against the ancestor matrix it replaced),
		// the roles, and the kept placement.
		if got, want := p.Pairs(), pairsMatrix(p); !slices.Equal(got, want) {
			t.Fatalf("Pairs %v, the matrix's %v", got, want)
		}
		_ = p.Roles()
		_ = p.Loads()
		if err := p.Kept().Validate(); err != nil {
			t.Fatalf("the kept placement of a valid one: %v", err)
		}
	})
}

// FuzzPairs draws placements of up to 40 blocks of every kind, on shared
// and grouped devices, from the fuzz input, and checks Pairs against the
// block × block ancestor matrix it replaced, with the roles and the
// loads that follow from it.
func FuzzPairs(f *testing.F) {
	for _, s := range []string{"", "\x07\x03\x01\x02", "\x28\x04\x13\x27\x05\x31\x00\x02\x09\x11\x42\x07\x01\x03"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rng := rand.New(rand.NewSource(int64(len(data))))
		for i, b := range data {
			rng.Seed(rng.Int63() ^ int64(b)<<(i%56))
		}
		k, d := 1, 1
		if len(data) > 0 {
			k = 1 + int(data[0])%40
		}
		if len(data) > 1 {
			d = 1 + int(data[1])%4
		}
		p := randomDAG(rng, k, d)
		if p.Validate() != nil {
			return
		}
		if got, want := p.Pairs(), pairsMatrix(p); !slices.Equal(got, want) {
			t.Fatalf("Pairs %v, the matrix's %v", got, want)
		}
		_ = p.Roles()
	})
}

// TestFuzzCorpus checks that the seed corpus holds every file of
// ../testdata/placements and ../testdata/bad; -update rewrites it.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParse"), []string{placementsDir, badDir}, *update, "./placement")
}
