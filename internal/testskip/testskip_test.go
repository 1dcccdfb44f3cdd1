package testskip

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeTB records what a test would do, without stopping this one.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skip(...any)           { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

// Under CI=true a skip fails the test; otherwise it skips.
func TestSkipFailsUnderCI(t *testing.T) {
	for _, ci := range []string{"true", ""} {
		t.Setenv("CI", ci)
		f := &fakeTB{}
		Skip(f, "no data")
		if want := ci == "true"; f.failed != want || f.skipped == want {
			t.Errorf("CI=%q: failed %v, skipped %v", ci, f.failed, f.skipped)
		}
	}
}

// No test of the repository skips except through this package: a raw
// t.Skip, t.Skipf or t.SkipNow would pass under CI=true without checking.
func TestNoRawSkips(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	self, _ := filepath.Abs(".")
	raw := regexp.MustCompile(`(\w+)\.(` + "Skip" + `|Skipf|SkipNow)\(`)
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == self {
			return nil
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range raw.FindAllStringSubmatch(line, -1) {
				if m[1] == "testskip" {
					continue
				}
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d skips on its own (use internal/testskip): %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Errorf("walked %d Go files under %s: not the repository", files, root)
	}
}
