package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/report"
)

// writeFiles writes files into dir (outfile.WriteDir), naming each on
// stdout.
func writeFiles(dir string, force bool, files []report.File, stdout io.Writer) error {
	out := make([]outfile.File, len(files))
	for k, f := range files {
		out[k] = outfile.File{Path: f.Name, Data: f.Data}
	}
	if err := outfile.WriteDir(dir, force, out); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, f.Name))
	}
	return nil
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

// outputs are the values of outputFlags: the files (package outfile)
// and --json.
type outputs struct {
	outfile.Schedule
	JSON bool
}

func outputsFrom(c *cli.Context) outputs {
	return outputs{Schedule: outfile.Schedule{Out: c.String("out"), SVG: c.String("svg"), HTML: c.String("html"), Force: c.Bool("force")}, JSON: c.Bool("json")}
}
