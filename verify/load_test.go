package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Load gives back a valid schedule file; a missing file and a schedule
// that breaks a rule are both bad input, the latter naming the file.
func TestLoad(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 4))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, starts []int) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		c := *s
		if starts != nil {
			c.Instances = append(c.Instances[:0:0], c.Instances...)
			c.Instances[0].Start = starts[0]
		}
		if err := c.Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return path
	}
	good := write("good.json", nil)
	got, err := verify.Load(good)
	if err != nil || len(got.Instances) != len(s.Instances) {
		t.Fatalf("Load(valid) = %v, %v", got, err)
	}
	if _, err := verify.Load(filepath.Join(dir, "none.json")); err == nil || !inputerr.Is(err) {
		t.Fatalf("Load(missing) = %v, want bad input", err)
	}
	// Every instance at one start: devices run two blocks at once.
	bad := write("bad.json", []int{s.Instances[1].Start + 1})
	_, err = verify.Load(bad)
	if err == nil || !inputerr.Is(err) || !strings.HasPrefix(err.Error(), bad+": invalid schedule (see tessel verify): ") {
		t.Fatalf("Load(invalid) = %v, want bad input naming the file", err)
	}
}
