package main

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
)

// kill -9 at random moments of a --force write leaves the old file or the
// whole new one, never a part (the writes go through package atomicfile,
// whose own test kills a writer 100 times).
func TestKillDuringForceWrite(t *testing.T) {
	testskip.Short(t, "starts child processes")
	dir := t.TempDir()
	s := filepath.Join(dir, "s.json")
	if code, _, errOut := runCLI(t, "search", "-p", "m-shape", "-m", "6", "-n", "256", "-o", s); code != 0 {
		t.Fatal(errOut)
	}
	want := filepath.Join(dir, "want.svg")
	if code, _, errOut := runCLI(t, "render", "-s", s, "--format", "svg", "-o", want); code != 0 {
		t.Fatal(errOut)
	}
	whole, _ := os.ReadFile(want)
	path := filepath.Join(dir, "old.svg")
	old := []byte("<svg>the old chart</svg>\n")
	rng := rand.New(rand.NewSource(2))
	for range 12 {
		os.WriteFile(path, old, 0o644)
		cmd := tesselChild("render", "-s", s, "--format", "svg", "-o", path, "--force")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, old) && !bytes.Equal(got, whole) {
			t.Fatalf("after kill -9 the file holds %d bytes: neither the old file nor the whole chart", len(got))
		}
	}
}

// gen --force replaces a symbolic link named like one of its files; it
// never writes, nor makes executable, what the link points to. compare
// --schedules refuses, before writing any, a set of files one of which
// exists.
func TestWritesNeverFollowLinks(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, "s.json")
	if code, _, errOut := runCLI(t, "search", "-n", "8", "-o", s); code != 0 {
		t.Fatal(errOut)
	}
	precious := filepath.Join(dir, "precious")
	os.WriteFile(precious, []byte("keep me"), 0o600)
	out := filepath.Join(dir, "run")
	os.Mkdir(out, 0o755)
	os.Symlink(precious, filepath.Join(out, "launch.sh"))
	if code, _, errOut := runCLI(t, "gen", "-s", s, "-o", out, "--force"); code != 0 {
		t.Fatal(errOut)
	}
	if got, _ := os.ReadFile(precious); string(got) != "keep me" {
		t.Errorf("gen --force wrote through the link: %q", got)
	}
	if fi, _ := os.Stat(precious); fi.Mode().Perm() != 0o600 {
		t.Errorf("gen --force changed the link's target's mode to %v", fi.Mode().Perm())
	}
	if fi, _ := os.Lstat(filepath.Join(out, "launch.sh")); fi.Mode()&os.ModeSymlink != 0 {
		t.Errorf("launch.sh is still a link")
	}

	schedules := filepath.Join(dir, "schedules")
	os.Mkdir(schedules, 0o755)
	os.WriteFile(filepath.Join(schedules, "tessel.json"), []byte("mine"), 0o644)
	code, _, errOut := runCLI(t, "compare", "-n", "8", "--schedules", schedules)
	if code != 2 || !strings.Contains(errOut, "exists") {
		t.Fatalf("compare over an existing schedule file: exit %d, %q", code, errOut)
	}
	if entries, _ := os.ReadDir(schedules); len(entries) != 1 {
		t.Errorf("a refused compare --schedules wrote %d files", len(entries)-1)
	}
}

// An output path that cannot be written is refused before the search, in
// one line: nothing is computed to be thrown away.
func TestOutputCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "-n", "100000", "-o", filepath.Join(dir, "no", "s.json")}, "no such file or directory"},
		{[]string{"search", "-n", "100000", "-o", dir}, "is a directory"},
		{[]string{"search", "-n", "100000", "-o", filepath.Join(dir, "a"), "--svg", filepath.Join(dir, "a")}, "named twice"},
		{[]string{"gen-dag", "-o", filepath.Join(dir, "p.json"), "--cluster-out", filepath.Join(dir, "no", "c.json")}, "no such file or directory"},
		{[]string{"partition", "--model", "../../testdata/models/gpt-like.json", "-o", filepath.Join(dir, "no", "p.json")}, "no such file or directory"},
	} {
		t0 := time.Now()
		code, out, errOut := runCLI(t, c.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q, %q; want exit 2 and one line with %q", c.args, code, out, errOut, c.want)
		}
		if time.Since(t0) > 5*time.Second {
			t.Errorf("%v: refused after %v: the path was not checked first", c.args, time.Since(t0))
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused commands left %v", entries)
	}
}
