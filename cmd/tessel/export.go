package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/internal/atomicfile"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/torchcsv"
)

// exportOptions are the flags of tessel export.
type exportOptions struct {
	Schedule string
	Format   string
	Out      string
	Force    bool
	Split    string // torchtitan: the JSON of tessel partition --json
}

// exportFormats are the formats tessel export writes.
var exportFormats = []string{"torch-csv", "torch-csv-comms", "torchtitan"}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a schedule as PyTorch's pipelining CSV (compute only, or with sends and receives) or a torchtitan bundle",
		UsageText: "tessel export --schedule FILE [--format torch-csv|torch-csv-comms|torchtitan] [--out FILE] [--force]",
		Description: "Writes the schedule as torch.distributed.pipelining reads it (PyTorch ≥ 2.6,\n" +
			"_PipelineScheduleRuntime._load_csv(f, format=\"compute_only\"); torchtitan's\n" +
			"--parallelism.pipeline_parallel_schedule_csv): no header, row r = rank r's actions\n" +
			"in schedule order, each <stage><F|B|I|W><micro-batch> with global stage ids, no\n" +
			"empty cells (only the order matters to PyTorch). Stage ids follow the chain of\n" +
			"forward blocks, so loop and V placements (several stages per device) export.\n" +
			"The placement must be a chain of stages: every block on one device, the forwards\n" +
			"one chain, each stage trained by a backward or by an input and a weight block;\n" +
			"anything else is refused with the reason. Every export passes PyTorch's\n" +
			"validator's rules, checked here.\n\n" +
			"torch-csv-comms writes the compute_comms form (_load_csv(f, format=\"compute_comms\")):\n" +
			"the sends and receives added by the rules of PyTorch's _add_send_recv, checked for\n" +
			"pairs and deadlock as its _simulate_comms_compute does. torchtitan writes a folder\n" +
			"--out with schedule.csv and torchtitan.toml, the settings that make torchtitan build\n" +
			"the stages the CSV runs (loop or V style; with --split, module_fqns_per_model_part).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: " + joinNames(exportFormats), Value: "torch-csv"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists"},
			&cli.StringFlag{Name: "split", Usage: "torchtitan: the JSON `FILE` of tessel partition --json, whose layer names are module names"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("export: unexpected argument %q", c.Args().First())
			}
			return runExport(c.Context, exportOptions{Schedule: c.String("schedule"), Format: c.String("format"),
				Out: c.String("out"), Force: c.Bool("force"), Split: c.String("split")}, c.App.Writer)
		},
	}
}

// runExport converts a verified schedule file. A schedule whose placement
// is no chain of stages is bad input (exit 2), with the reason.
func runExport(_ context.Context, opts exportOptions, stdout io.Writer) error {
	switch {
	case opts.Schedule == "":
		return usageErrorf("export: --schedule FILE is required")
	case !slices.Contains(exportFormats, opts.Format):
		return usageErrorf("export: --format must be one of %s, got %q", joinNames(exportFormats), opts.Format)
	case opts.Format == "torchtitan" && opts.Out == "":
		return usageErrorf("export: --format torchtitan writes a folder: give --out DIR")
	case opts.Split != "" && opts.Format != "torchtitan":
		return usageErrorf("export: --split applies to --format torchtitan")
	}
	if opts.Format == "torchtitan" {
		return exportTitan(opts, stdout)
	}
	if err := checkOut(opts.Force, opts.Out); err != nil {
		return err
	}
	s, err := loadVerified(opts.Schedule)
	if err != nil {
		return err
	}
	tab, data, form, err := torchcsv.ExportCSV(s, opts.Format == "torch-csv-comms")
	if err != nil {
		return usageErrorf("%s: cannot export to PyTorch's CSV: %v", opts.Schedule, err)
	}
	if opts.Out == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := writeNew(opts.Out, opts.Force, data); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: %d ranks, %d stages, %d micro-batches (PyTorch pipelining CSV, %s)\n",
		opts.Out, len(tab.Rows), tab.Stages(), s.MicroBatches, form)
	return err
}

// exportTitan writes the torchtitan bundle: the folder opts.Out with
// schedule.csv and torchtitan.toml.
func exportTitan(opts exportOptions, stdout io.Writer) error {
	csvPath, tomlPath := filepath.Join(opts.Out, "schedule.csv"), filepath.Join(opts.Out, "torchtitan.toml")
	if err := checkOutDir(opts.Out, true); err != nil {
		return err
	}
	if err := checkNew(opts.Force, csvPath, tomlPath); err != nil {
		return err
	}
	s, err := loadVerified(opts.Schedule)
	if err != nil {
		return err
	}
	var to torchcsv.TitanOptions
	if opts.Split != "" {
		data, err := limits.ReadFile(opts.Split, limits.FileBytes)
		if err != nil {
			return &usageError{err}
		}
		if to.Modules, to.StageDevices, err = partition.ReadStages(data); err != nil {
			return usageErrorf("%s: %v", opts.Split, err)
		}
	}
	b, err := torchcsv.Titan(s, to)
	if err != nil {
		return usageErrorf("%s: cannot export to torchtitan: %v", opts.Schedule, err)
	}
	bundle := []atomicfile.File{{Name: "schedule.csv", Data: b.Table.Marshal()}, {Name: "torchtitan.toml", Data: b.Config(csvPath)}}
	if err := writeError(atomicfile.WriteFiles(opts.Out, bundle, atomicfile.Options{Replace: opts.Force})); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s and %s: %d ranks, %d stages (%s style, %d per rank), %d micro-batches\n",
		csvPath, tomlPath, b.Ranks, b.Stages, b.Style, b.StagesPerRank, b.MicroBatches)
	return err
}
