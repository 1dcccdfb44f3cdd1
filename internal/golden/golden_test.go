package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// fake records whether a check failed, without failing the real test.
type fake struct {
	testing.TB
	failed bool
}

func (f *fake) Helper()               { f.TB.Helper() }
func (f *fake) Name() string          { return f.TB.Name() }
func (f *fake) Errorf(string, ...any) { f.failed = true }
func (f *fake) Fatalf(string, ...any) { f.failed = true; panic(f) }
func (f *fake) Fatal(...any)          { f.failed = true; panic(f) }

func check(t *testing.T, name string, got []byte) (failed bool) {
	f := &fake{TB: t}
	defer func() {
		if r := recover(); r != nil && r != any(f) {
			panic(r)
		}
		failed = f.failed
	}()
	Check(f, name, got)
	return f.failed
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	os.Mkdir("testdata", 0o755)
	os.WriteFile(filepath.Join("testdata", "a.txt"), []byte("same\n"), 0o644)
	if check(t, "a.txt", []byte("same\n")) {
		t.Error("equal bytes fail the check")
	}
	if !check(t, "a.txt", []byte("other\n")) {
		t.Error("different bytes pass the check")
	}
	if !check(t, "none.txt", []byte("x")) {
		t.Error("a missing golden file passes the check")
	}
}
