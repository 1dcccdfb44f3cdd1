package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/atomicfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// writeNew writes data to path, refusing to replace an existing file
// unless force: nothing the user wrote is overwritten by surprise. The
// write is atomic (package atomicfile): a failure or a kill leaves the
// old file, or none.
func writeNew(path string, force bool, data []byte) error {
	return writeError(atomicfile.WriteBytes(path, data, atomicfile.Options{Replace: force}))
}

// writeDrawn writes what write draws to path as writeNew does.
func writeDrawn(path string, force bool, write func(io.Writer) error) error {
	return writeError(atomicfile.Write(path, atomicfile.Options{Replace: force}, write))
}

// outFile is a file drawn in memory, waiting to be written.
type outFile struct {
	path string
	data []byte
}

// writeOutFiles writes files drawn beforehand (so that a failure to draw
// one writes none), each with writeNew.
func writeOutFiles(force bool, files []outFile) error {
	for _, f := range files {
		if err := writeNew(f.path, force, f.data); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes files into dir (made when missing), all or nothing,
// naming each on stdout.
func writeFiles(dir string, force bool, files []report.File, stdout io.Writer) error {
	bundle := make([]atomicfile.File, len(files))
	for k, f := range files {
		bundle[k] = atomicfile.File{Name: f.Name, Data: f.Data}
	}
	if err := writeError(atomicfile.WriteFiles(dir, bundle, atomicfile.Options{Replace: force})); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, f.Name))
	}
	return nil
}

// writeError is a failed write as the user should read it: a file in the
// way, a directory that is missing or may not be written are bad input
// (exit 2); anything else (a full disk) is not.
func writeError(err error) error {
	var ee *atomicfile.ExistError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return usageErrorf("%s exists (use --force to overwrite it)", ee.Path)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS),
		errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return &usageError{err}
	}
	return err
}

// checkOut refuses, before any long work, output files that could not be
// written: one that exists (without force), a directory, a directory that
// is missing or read-only, or two flags naming one file.
func checkOut(force bool, paths ...string) error {
	seen := map[string]bool{}
	for _, path := range paths {
		if path == "" || path == "-" {
			continue
		}
		if abs, err := filepath.Abs(path); err == nil {
			if seen[abs] {
				return usageErrorf("%s is named twice as an output", path)
			}
			seen[abs] = true
		}
		if err := writeError(atomicfile.Check(path, force)); err != nil {
			var ue *usageError
			if !errors.As(err, &ue) {
				err = &usageError{err}
			}
			return err
		}
	}
	return nil
}

// checkNew refuses, before any long work, files that exist (unless
// force): files in a directory that may not exist yet.
func checkNew(force bool, paths ...string) error {
	for _, path := range paths {
		if _, err := os.Lstat(path); err == nil && !force {
			return usageErrorf("%s exists (use --force to overwrite it)", path)
		}
	}
	return nil
}

// checkOutDir refuses, before any long work, an output directory that
// could not take the files: a file, a directory with anything in it
// unless force, or one that cannot be written.
func checkOutDir(dir string, force bool) error {
	err := atomicfile.CheckDir(dir, force)
	if atomicfile.IsNotEmpty(err) {
		return usageErrorf("%s is not empty (use --force to write into it)", dir)
	}
	if err != nil {
		return &usageError{err}
	}
	return nil
}

// drawn draws into memory, so that a failure leaves no partial file.
func drawn(s *schedule.Schedule, draw func(*schedule.Schedule, io.Writer) error) ([]byte, error) {
	var buf bytes.Buffer
	if err := draw(s, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// outputFlags are the files a searching command can write its result to.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the schedule to a JSON `FILE` (re-check it with tessel verify; beyond 1,048,576 instances an extended schedule is written by its period: docs/formats.md#periodic-schedule-file)"},
		&cli.StringFlag{Name: "svg", Usage: "write a Gantt chart of the schedule to an SVG `FILE`"},
		&cli.StringFlag{Name: "html", Usage: "write a page with the chart and the metrics to an HTML `FILE`"},
		&cli.BoolFlag{Name: "force", Usage: "overwrite --out, --svg and --html files that exist"},
		&cli.BoolFlag{Name: "json", Usage: "print a JSON summary instead of text"},
	}
}

// outputs are the values of outputFlags.
type outputs struct {
	Out, SVG, HTML string
	Force, JSON    bool
	// cluster and given, when set, are recorded in the schedule file
	// (onCluster).
	cluster *cluster.Cluster
	given   *placement.Placement
}

// onCluster makes write record that schedules run on c, their placement
// being given on it (nil: no cluster).
func (o outputs) onCluster(c *cluster.Cluster, given *placement.Placement) outputs {
	o.cluster, o.given = c, given
	return o
}

func outputsFrom(c *cli.Context) outputs {
	return outputs{Out: c.String("out"), SVG: c.String("svg"), HTML: c.String("html"), Force: c.Bool("force"), JSON: c.Bool("json")}
}

// check refuses, before any long work, files that could not be written
// (checkOut).
func (o outputs) check() error {
	return checkOut(o.Force, o.Out, o.SVG, o.HTML)
}

// writeVerified verifies s, the schedule a command's search returned (a
// failure is a bug of the search), and writes it (write).
func (o outputs) writeVerified(command string, s *schedule.Schedule) error {
	if err := verify.Schedule(s); err != nil {
		return fmt.Errorf("%s: the schedule fails verification (a bug): %w", command, err)
	}
	return o.write(s)
}

// write saves a verified schedule to every file asked for.
func (o outputs) write(s *schedule.Schedule) error {
	if o.cluster != nil && s.Cluster == nil {
		on := *s
		if err := on.SetCluster(o.cluster, o.given); err != nil {
			return fmt.Errorf("record the cluster: %w", err)
		}
		s = &on
	}
	// Everything is drawn before anything is written.
	var files []outFile
	for _, f := range []struct {
		path string
		draw func(*schedule.Schedule, io.Writer) error
	}{{o.Out, (*schedule.Schedule).Write}, {o.SVG, render.SVG}, {o.HTML, render.HTML}} {
		if f.path == "" {
			continue
		}
		data, err := drawn(s, f.draw)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		files = append(files, outFile{f.path, data})
	}
	return writeOutFiles(o.Force, files)
}
