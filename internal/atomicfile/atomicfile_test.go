package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
)

// The test binary doubles as a writer to kill: with ATOMICFILE_CHILD set
// it writes that file (replacing it) slowly, in pieces, and exits.
func TestMain(m *testing.M) {
	if path := os.Getenv("ATOMICFILE_CHILD"); path != "" {
		err := Write(path, Options{Replace: true}, func(w io.Writer) error {
			chunk := bytes.Repeat([]byte("new data\n"), 1<<12)
			for range 64 {
				if _, err := w.Write(chunk); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// newContent is what the child writes, whole.
var newContent = bytes.Repeat(bytes.Repeat([]byte("new data\n"), 1<<12), 64)

// kill -9 at a random moment of a write leaves the old file or the whole
// new one, never a part: 100 kills, spread over the writer's life.
func TestKillLeavesOldFile(t *testing.T) {
	testskip.Short(t, "starts 100 processes")
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	old := []byte("the old file\n")
	rng := rand.New(rand.NewSource(1))
	sawOld, sawNew := 0, 0
	for range 100 {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Intn(150)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case bytes.Equal(got, old):
			sawOld++
		case bytes.Equal(got, newContent):
			sawNew++
		default:
			t.Fatalf("after a kill the file holds %d bytes, neither the old file nor the new one", len(got))
		}
	}
	t.Logf("%d kills left the old file, %d the new one", sawOld, sawNew)
	if sawOld == 0 {
		t.Errorf("no kill landed during a write: the test does not test")
	}
}

// A write that fails (a full disk: ENOSPC after a mebibyte) leaves the old
// file and no temporary file.
func TestFailedWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	old := []byte("the old file\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	full := func(w io.Writer) error {
		if _, err := w.Write(make([]byte, 1<<20)); err != nil {
			return err
		}
		return &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	}
	for _, replace := range []bool{false, true} {
		err := Write(path, Options{Replace: replace}, full)
		if err == nil {
			t.Fatalf("replace %v: a failed write succeeded", replace)
		}
		if want := map[bool]error{false: syscall.ENOSPC, true: syscall.ENOSPC}[replace]; !errors.Is(err, want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("replace %v: error %q, want the path and ENOSPC", replace, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
			t.Errorf("replace %v: the old file became %d bytes", replace, len(got))
		}
	}
	// Without the old file, a failed write leaves nothing either: a rerun
	// does not find a partial file in its way.
	os.Remove(path)
	if err := Write(path, Options{}, full); err == nil {
		t.Fatal("a failed write succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("a failed write left %v", entries)
	}
}

// /dev/full fails every write with ENOSPC: the real error of a full disk,
// through the buffer and the file as Write uses them.
func TestDevFull(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		testskip.Skip(t, "no /dev/full")
	}
	err = fill(f, func(w io.Writer) error { _, err := w.Write(make([]byte, 1<<17)); return err })
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing /dev/full: %v, want ENOSPC", err)
	}
}

func TestNoReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := WriteBytes(path, []byte("one"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, []byte("two"), Options{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second write without Replace: %v, want ErrExist", err)
	}
	if err := WriteBytes(path, []byte("two"), Options{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "two" {
		t.Errorf("after Replace: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	// The umask applies, as to any new file.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p2 := filepath.Join(dir, "b.sh")
	if err := WriteBytes(p2, []byte("x"), Options{Perm: 0o755}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p2); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v under umask 077, want -rwx------", fi.Mode().Perm())
	}
}

// A symbolic link in the way is replaced, not written through: its
// target is never touched, with Replace or without (then it is refused).
func TestSymlinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "launch.sh")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(link, []byte("#!/bin/sh\n"), Options{Perm: 0o755}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("over a symlink without Replace: %v, want ErrExist", err)
	}
	if err := WriteFiles(dir, []File{{Name: "launch.sh", Data: []byte("#!/bin/sh\n"), Perm: 0o755}}, Options{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep me" {
		t.Errorf("the symlink's target became %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("the symlink's target's mode became %v", fi.Mode().Perm())
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("launch.sh is %v, want an executable regular file", fi.Mode())
	}
}

func TestWriteFilesAllOrNothing(t *testing.T) {
	root := t.TempDir()
	files := []File{{Name: "a", Data: []byte("A")}, {Name: "b.sh", Data: []byte("B"), Perm: 0o755}}
	// A new directory appears whole.
	dir := filepath.Join(root, "x", "bundle")
	if err := WriteFiles(dir, files, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "b.sh")); string(got) != "B" {
		t.Errorf("b.sh: %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "x")); len(entries) != 1 {
		t.Errorf("beside the bundle: %v", entries)
	}
	// Into an existing directory without Replace, one existing name
	// refuses the lot, before anything is written.
	os.Remove(filepath.Join(dir, "a"))
	err := WriteFiles(dir, []File{{Name: "a", Data: []byte("new")}, {Name: "b.sh", Data: []byte("new")}}, Options{})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("over b.sh without Replace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Errorf("a refused bundle wrote a")
	}
	if err := WriteFiles(dir, []File{{Name: "../evil", Data: nil}}, Options{}); err == nil {
		t.Errorf("a name with a directory was taken")
	}
	// A failing file (a directory in its way) leaves the others unwritten.
	os.Mkdir(filepath.Join(dir, "c"), 0o755)
	err = WriteFiles(dir, []File{{Name: "a", Data: []byte("new")}, {Name: "c", Data: []byte("C")}}, Options{Replace: true})
	if err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Errorf("a failed bundle wrote a")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left in the directory: %v", entries)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Check(path, false); err != nil {
		t.Errorf("a new file: %v", err)
	}
	os.WriteFile(path, nil, 0o644)
	if err := Check(path, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("an existing file without replace: %v", err)
	}
	if err := Check(path, true); err != nil {
		t.Errorf("an existing file with replace: %v", err)
	}
	if err := Check(filepath.Join(dir, "no", "f"), false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("in a missing directory: %v", err)
	}
	if err := Check(dir, true); err == nil {
		t.Errorf("a directory as a file: no error")
	}
	if os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if err := Check(filepath.Join(ro, "f"), false); err == nil {
			t.Errorf("in a read-only directory: no error")
		}
	}
	if err := CheckDir(filepath.Join(dir, "new", "deeper"), false); err != nil {
		t.Errorf("a new directory: %v", err)
	}
	if err := CheckDir(dir, false); !IsNotEmpty(err) {
		t.Errorf("a directory with files: %v", err)
	}
	if err := CheckDir(path, true); err == nil {
		t.Errorf("a file as a directory: no error")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("Check left %s", e.Name())
		}
	}
}
