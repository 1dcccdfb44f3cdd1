// Package outfile writes what a command makes to the files the user
// named: each file whole or not at all (package atomicfile), never over
// a file that exists unless asked to (Force), and checked before any long
// work so that a search is not lost to a file in the way. Its refusals are
// bad input (package inputerr); a full disk is not.
package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/atomicfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// WriteNew writes data to path, refusing to replace an existing file
// unless force: nothing the user wrote is overwritten by surprise. The
// write is atomic: a failure or a kill leaves the old file, or none.
func WriteNew(path string, force bool, data []byte) error {
	return writeError(atomicfile.WriteBytes(path, data, atomicfile.Options{Replace: force}))
}

// WriteDrawn writes what write draws to path as WriteNew does.
func WriteDrawn(path string, force bool, write func(io.Writer) error) error {
	return writeError(atomicfile.Write(path, atomicfile.Options{Replace: force}, write))
}

// File is a file drawn in memory, waiting to be written: Path is where
// (WriteAll), or its name in a directory (WriteDir).
type File struct {
	Path string
	Data []byte
}

// WriteAll writes files drawn beforehand (so that a failure to draw one
// writes none), each with WriteNew.
func WriteAll(force bool, files []File) error {
	for _, f := range files {
		if err := WriteNew(f.Path, force, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// WriteDir writes files into dir (made when missing), all or nothing:
// each File's Path is its name in dir.
func WriteDir(dir string, force bool, files []File) error {
	bundle := make([]atomicfile.File, len(files))
	for k, f := range files {
		bundle[k] = atomicfile.File{Name: f.Path, Data: f.Data}
	}
	return writeError(atomicfile.WriteFiles(dir, bundle, atomicfile.Options{Replace: force}))
}

// writeError is a failed write as the user should read it: a file in the
// way, a directory that is missing or may not be written are bad input;
// anything else (a full disk) is not.
func writeError(err error) error {
	var ee *atomicfile.ExistError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return inputerr.Errorf("%s exists (use --force to overwrite it)", ee.Path)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS),
		errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return inputerr.Wrap(err)
	}
	return err
}

// WriteError is err, a failure to write files, as WriteNew returns it:
// for writers other than this package's (runtimegen.WriteFiles).
func WriteError(err error) error { return writeError(err) }

// Check refuses, before any long work, output files that could not be
// written: one that exists (without force), a directory, a directory that
// is missing or read-only, or two paths naming one file. "" and "-"
// (standard output) are skipped.
func Check(force bool, paths ...string) error {
	seen := map[string]bool{}
	for _, path := range paths {
		if path == "" || path == "-" {
			continue
		}
		if abs, err := filepath.Abs(path); err == nil {
			if seen[abs] {
				return inputerr.Errorf("%s is named twice as an output", path)
			}
			seen[abs] = true
		}
		if err := writeError(atomicfile.Check(path, force)); err != nil {
			return inputerr.Wrap(err)
		}
	}
	return nil
}

// CheckNew refuses, before any long work, files that exist (unless
// force): files in a directory that may not exist yet.
func CheckNew(force bool, paths ...string) error {
	for _, path := range paths {
		if _, err := os.Lstat(path); err == nil && !force {
			return inputerr.Errorf("%s exists (use --force to overwrite it)", path)
		}
	}
	return nil
}

// CheckDir refuses, before any long work, an output directory that could
// not take the files: a file, a directory with anything in it unless
// force, or one that cannot be written.
func CheckDir(dir string, force bool) error {
	err := atomicfile.CheckDir(dir, force)
	if atomicfile.IsNotEmpty(err) {
		return inputerr.Errorf("%s is not empty (use --force to write into it)", dir)
	}
	return inputerr.Wrap(err)
}

// Drawn draws s into memory, so that a failure leaves no partial file.
func Drawn(s *schedule.Schedule, draw func(*schedule.Schedule, io.Writer) error) ([]byte, error) {
	var buf bytes.Buffer
	if err := draw(s, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Schedule names the files a schedule goes to: its JSON file (Out), a
// Gantt chart (SVG) and a page (HTML), "" for none; Force overwrites
// them. Cluster and Given, when set, are recorded in the schedule file:
// the schedule runs on Cluster, its placement given on it as Given.
type Schedule struct {
	Out, SVG, HTML string
	Force          bool
	Cluster        *cluster.Cluster
	Given          *placement.Placement
}

// Check refuses, before any long work, files that could not be written
// (Check).
func (o Schedule) Check() error {
	return Check(o.Force, o.Out, o.SVG, o.HTML)
}

// WriteVerified verifies s, the schedule a command's search returned (a
// failure is a bug of the search, not bad input), and writes it.
func (o Schedule) WriteVerified(command string, s *schedule.Schedule) error {
	if err := verify.Schedule(s); err != nil {
		return fmt.Errorf("%s: the schedule fails verification (a bug): %w", command, err)
	}
	return o.Write(s)
}

// Write saves a verified schedule to every file asked for; everything is
// drawn before anything is written.
func (o Schedule) Write(s *schedule.Schedule) error {
	if o.Cluster != nil && s.Cluster == nil {
		on := *s
		if err := on.SetCluster(o.Cluster, o.Given); err != nil {
			return fmt.Errorf("record the cluster: %w", err)
		}
		s = &on
	}
	var files []File
	for _, f := range []struct {
		path string
		draw func(*schedule.Schedule, io.Writer) error
	}{{o.Out, (*schedule.Schedule).Write}, {o.SVG, render.SVG}, {o.HTML, render.HTML}} {
		if f.path == "" {
			continue
		}
		data, err := Drawn(s, f.draw)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		files = append(files, File{f.path, data})
	}
	return WriteAll(o.Force, files)
}
