package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/inputerr"
)

// A file that exists is never replaced without force, and every refusal
// is bad input naming the file.
func TestWriteNewRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := WriteNew(path, false, []byte("one")); err != nil {
		t.Fatal(err)
	}
	err := WriteNew(path, false, []byte("two"))
	if err == nil || !inputerr.Is(err) || err.Error() != path+" exists (use --force to overwrite it)" {
		t.Fatalf("WriteNew over a file = %v, want bad input naming it", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one" {
		t.Fatalf("the refused write changed the file to %q", got)
	}
	if err := WriteNew(path, true, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "two" {
		t.Fatalf("forced write left %q", got)
	}
	if err := WriteNew(filepath.Join(dir, "missing", "b.txt"), false, nil); err == nil || !inputerr.Is(err) {
		t.Fatalf("a write into a missing directory = %v, want bad input", err)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "e.json")
	os.WriteFile(exists, []byte("{}"), 0o644)
	fresh := filepath.Join(dir, "f.json")
	for _, c := range []struct {
		name  string
		force bool
		paths []string
		want  string // "" for none
	}{
		{"fresh", false, []string{fresh, "", "-"}, ""},
		{"exists", false, []string{fresh, exists}, "exists (use --force"},
		{"forced", true, []string{exists}, ""},
		{"twice", true, []string{fresh, filepath.Join(dir, ".", "f.json")}, "is named twice as an output"},
		{"directory", true, []string{dir}, "is a directory"},
		{"no directory", false, []string{filepath.Join(dir, "no", "x")}, "no such file"},
	} {
		err := Check(c.force, c.paths...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !inputerr.Is(err)):
			t.Errorf("%s: got %v, want bad input containing %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("Check wrote a file")
	}
	if err := CheckNew(false, exists); err == nil || !inputerr.Is(err) {
		t.Errorf("CheckNew of a file that exists = %v", err)
	}
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	files := []File{{Path: "a", Data: []byte("A")}, {Path: "b", Data: []byte("B")}}
	if err := WriteDir(dir, false, files); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(dir, false); err == nil || err.Error() != dir+" is not empty (use --force to write into it)" {
		t.Fatalf("CheckDir of a full directory = %v", err)
	}
	if err := CheckDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(dir, false, files[1:]); err == nil || !inputerr.Is(err) {
		t.Fatalf("WriteDir over b without force = %v, want bad input", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "b")); string(got) != "B" {
		t.Fatalf("b holds %q", got)
	}
}
