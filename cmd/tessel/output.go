package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
)

// writeNew writes data to path, refusing to replace an existing file
// unless force: nothing the user wrote is overwritten by surprise.
func writeNew(path string, force bool, data []byte) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return usageErrorf("%s exists (use --force to overwrite it)", path)
	}
	if err != nil {
		return usageErrorf("%v", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeDrawn writes what write draws to path (writeNew), drawn in memory
// first so that a failure leaves no partial file.
func writeDrawn(path string, force bool, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return writeNew(path, force, buf.Bytes())
}

// writeFiles writes files into dir (made when missing) with writeNew,
// naming each on stdout.
func writeFiles(dir string, force bool, files []report.File, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErrorf("%v", err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if err := writeNew(path, force, f.Data); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
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
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the schedule to a JSON `FILE` (re-check it with tessel verify)"},
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

// check refuses, before any long work, files that exist and may not be
// replaced.
func (o outputs) check() error {
	for _, path := range []string{o.Out, o.SVG, o.HTML} {
		if path == "" || o.Force {
			continue
		}
		if _, err := os.Stat(path); err == nil {
			return usageErrorf("%s exists (use --force to overwrite it)", path)
		}
	}
	return nil
}

// writeVerified verifies s, the schedule a command's search returned (a
// failure is a bug of the search), and writes it (write).
func (o outputs) writeVerified(command string, s *schedule.Schedule) error {
	if err := schedule.Verify(s); err != nil {
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
		if err := writeNew(f.path, o.Force, data); err != nil {
			return err
		}
	}
	return nil
}
