package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/torchcsv"
)

// exportOptions are the flags of tessel export.
type exportOptions struct {
	Schedule string
	Format   string
	Out      string
	Force    bool
}

// exportFormats are the formats tessel export writes.
var exportFormats = []string{"torch-csv"}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a schedule in PyTorch's pipelining CSV (compute only)",
		UsageText: "tessel export --schedule FILE [--format torch-csv] [--out FILE] [--force]",
		Description: "Writes the schedule as torch.distributed.pipelining reads it (PyTorch ≥ 2.6,\n" +
			"_PipelineScheduleRuntime._load_csv(f, format=\"compute_only\"); torchtitan's\n" +
			"--parallelism.pipeline_parallel_schedule_csv): no header, row r = rank r's actions\n" +
			"in schedule order, each <stage><F|B|I|W><micro-batch> with global stage ids, no\n" +
			"empty cells (only the order matters to PyTorch). Stage ids follow the chain of\n" +
			"forward blocks, so loop and V placements (several stages per device) export.\n" +
			"The placement must be a chain of stages: every block on one device, the forwards\n" +
			"one chain, each stage trained by a backward or by an input and a weight block;\n" +
			"anything else is refused with the reason. Every export passes PyTorch's\n" +
			"validator's rules, checked here.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: " + joinNames(exportFormats), Value: "torch-csv"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("export: unexpected argument %q", c.Args().First())
			}
			return runExport(c.Context, exportOptions{Schedule: c.String("schedule"), Format: c.String("format"),
				Out: c.String("out"), Force: c.Bool("force")}, c.App.Writer)
		},
	}
}

// runExport converts a verified schedule file. A schedule whose placement
// is no chain of stages is bad input (exit 2), with the reason.
func runExport(_ context.Context, opts exportOptions, stdout io.Writer) error {
	switch {
	case opts.Schedule == "":
		return usageErrorf("export: --schedule FILE is required")
	case opts.Format != "torch-csv":
		return usageErrorf("export: --format must be one of %s, got %q", joinNames(exportFormats), opts.Format)
	}
	if opts.Out != "" && !opts.Force {
		if err := (outputs{Out: opts.Out}).check(); err != nil {
			return err
		}
	}
	s, err := loadVerified(opts.Schedule)
	if err != nil {
		return err
	}
	tab, err := torchcsv.Export(s)
	if err != nil {
		return usageErrorf("%s: cannot export to PyTorch's CSV: %v", opts.Schedule, err)
	}
	data := tab.Marshal()
	if opts.Out == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := writeNew(opts.Out, opts.Force, data); err != nil {
		return err
	}
	stages := 0
	for _, row := range tab.Rows {
		for _, a := range row {
			stages = max(stages, a.Stage+1)
		}
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: %d ranks, %d stages, %d micro-batches (PyTorch pipelining CSV, compute only)\n",
		opts.Out, len(tab.Rows), stages, s.MicroBatches)
	return err
}
