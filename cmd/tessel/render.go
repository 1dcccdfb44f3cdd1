package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/schedule"
)

// renderOptions are the flags of tessel render.
type renderOptions struct {
	Schedule string // path of the schedule file
	Format   string // one of render.Formats
	Out      string // output file; "" for stdout
	Force    bool   // overwrite Out if it exists
}

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:      "render",
		Usage:     "draw a schedule file: text, SVG Gantt chart, HTML page or Chrome trace",
		UsageText: "tessel render --schedule FILE [--format text|svg|html|trace] [--out FILE [--force]]",
		Description: "text: one row per device and one cell per time unit, as in the paper's figures.\n" +
			"svg: a Gantt chart, forward blue, backward orange, repetend boundaries red.\n" +
			"html: a self-contained page with the chart and a table of metrics.\n" +
			"trace: Chrome trace event JSON for chrome://tracing or Perfetto.\n" +
			"The schedule is drawn as it is; run tessel verify to check it.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: " + strings.Join(render.FormatNames(), ", "), Value: "text"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of standard output"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite the --out file if it exists"},
		},
		Action: func(c *cli.Context) error {
			return runRender(c.Context, renderOptions{
				Schedule: c.String("schedule"), Format: c.String("format"), Out: c.String("out"), Force: c.Bool("force"),
			}, c.App.Writer)
		},
	}
}

// runRender draws the schedule file in the chosen format, on stdout or
// into opts.Out, which it refuses to overwrite unless opts.Force. Bad
// flags and unreadable files are usage errors.
func runRender(_ context.Context, opts renderOptions, stdout io.Writer) error {
	format, ok := render.Lookup(opts.Format)
	if !ok {
		return usageErrorf("render: unknown --format %q (want %s)", opts.Format, strings.Join(render.FormatNames(), ", "))
	}
	if opts.Schedule == "" {
		return usageErrorf("render: --schedule FILE is required")
	}
	if opts.Force && opts.Out == "" {
		return usageErrorf("render: --force needs --out FILE")
	}
	if err := outfile.Check(opts.Force, opts.Out); err != nil {
		return err
	}
	s, err := schedule.Load(opts.Schedule)
	if err != nil {
		return inputerr.Wrap(err)
	}
	data, err := outfile.Drawn(s, format.Draw)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Schedule, err)
	}
	if opts.Out == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := outfile.WriteNew(opts.Out, opts.Force, data); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (%s, %d bytes)\n", opts.Out, opts.Format, len(data))
	return err
}
