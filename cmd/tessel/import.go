package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/torchcsv"
)

// importOptions are the flags of tessel import.
type importOptions struct {
	TorchCSV     string
	Name         string
	Naming       string // auto, current or old
	Opt          torchcsv.ImportOptions
	Out          string // schedule file
	PlacementOut string // placement file
	Force        bool
	OverlapTime  string // --overlap-time: keep OVERLAP_F_B as pairs
}

func importCommand() *cli.Command {
	d := torchcsv.DefaultImportOptions()
	return &cli.Command{
		Name:      "import",
		Usage:     "read any PyTorch pipelining CSV (both formats, OVERLAP_F_B, BW) into a schedule tessel can verify, render and simulate",
		UsageText: "tessel import --torch-csv FILE [--forward-time T] [--backward-time T] [--input-time T] [--weight-time T] [--memory M] [--out FILE] [--placement-out FILE]",
		Description: "Reads a compute-only CSV of torch.distributed.pipelining (a user's own, or one\n" +
			"dumped from PyTorch's built-in schedules: row r = rank r, cells <stage><F|B|I|W><micro>,\n" +
			"empty cells idle), checks it by PyTorch's validator's rules, and builds:\n\n" +
			"  the placement  one device per row; stage s = forward f<s>, and b<s> (full\n" +
			"                 backward) or i<s> and w<s> (input and weight gradients), on the rank\n" +
			"                 whose row holds it; dependencies of a chain by stage id (f<s> -> f<s+1>,\n" +
			"                 the last forward -> its b or i, b/i of s+1 -> b/i of s, i<s> -> w<s>);\n" +
			"                 every stage's times and memory from the flags\n" +
			"  the schedule   every rank runs its row in order, each block as early as that order\n" +
			"                 and the dependencies allow (only the order comes from the file)\n\n" +
			"The result is verified (dependencies, devices, --memory); --out writes it for tessel\n" +
			"verify, render, simulate and gen, --placement-out the placement alone for tessel\n" +
			"search and compare --placement-file.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "torch-csv", Usage: "the CSV `FILE` to read (compute_only or compute_comms)"},
			&cli.StringFlag{Name: "torch-naming", Usage: "what B means: " + joinNames(torchcsv.Namings()) + " (old: B input gradient, BW full backward)", Value: "auto"},
			&cli.StringFlag{Name: "overlap-time", Usage: "keep every OVERLAP_F_B as an overlapped pair taking `T`, or a factor of F + B such as 0.7x (without it: its two actions back to back)"},
			&cli.IntFlag{Name: "forward-time", Usage: "time of every forward (F)", Value: d.ForwardTime},
			&cli.IntFlag{Name: "backward-time", Usage: "time of every full backward (B)", Value: d.BackwardTime},
			&cli.IntFlag{Name: "input-time", Usage: "time of every input gradient (I)", Value: d.InputTime},
			&cli.IntFlag{Name: "weight-time", Usage: "time of every weight gradient (W)", Value: d.WeightTime},
			&cli.IntFlag{Name: "forward-memory", Usage: "memory of every forward (activations kept)", Value: d.ForwardMemory},
			&cli.IntFlag{Name: "backward-memory", Usage: "memory of every full backward (negative frees)", Value: d.BackwardMemory},
			&cli.IntFlag{Name: "input-memory", Usage: "memory of every input gradient", Value: d.InputMemory},
			&cli.IntFlag{Name: "weight-memory", Usage: "memory of every weight gradient (negative frees)", Value: d.WeightMemory},
			&cli.IntFlag{Name: "memory", Aliases: []string{"m"}, Usage: "per-device memory budget to verify against (0: unlimited)"},
			&cli.StringFlag{Name: "name", Usage: "name of the placement (default: the CSV file's name)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the schedule to a JSON `FILE`"},
			&cli.StringFlag{Name: "placement-out", Usage: "write the placement to a JSON `FILE`"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out and --placement-out files that exist"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("import: unexpected argument %q", c.Args().First())
			}
			return runImport(c.Context, importOptions{
				TorchCSV: c.String("torch-csv"),
				Name:     c.String("name"),
				Naming:   c.String("torch-naming"),
				Opt: torchcsv.ImportOptions{
					ForwardTime: c.Int("forward-time"), BackwardTime: c.Int("backward-time"),
					InputTime: c.Int("input-time"), WeightTime: c.Int("weight-time"),
					ForwardMemory: c.Int("forward-memory"), BackwardMemory: c.Int("backward-memory"),
					InputMemory: c.Int("input-memory"), WeightMemory: c.Int("weight-memory"),
					Memory: c.Int("memory"),
				},
				Out: c.String("out"), PlacementOut: c.String("placement-out"), Force: c.Bool("force"),
				OverlapTime: c.String("overlap-time"),
			}, c.App.Writer)
		},
	}
}

// runImport reads the CSV, builds and verifies the schedule, prints one
// line about it and writes the files asked for. Everything wrong with the
// file or the flags is a usage error (exit 2).
func runImport(_ context.Context, opts importOptions, stdout io.Writer) error {
	if opts.TorchCSV == "" {
		return usageErrorf("import: --torch-csv FILE is required")
	}
	o := &opts.Opt
	if err := o.Check(); err != nil {
		return &usageError{err}
	}
	if err := checkAtLeast("memory", o.Memory, 0); err != nil {
		return err
	}
	if opts.Out != "" && opts.Out == opts.PlacementOut {
		return usageErrorf("import: --out and --placement-out name the same file %s", opts.Out)
	}
	if err := (outputs{Out: opts.Out, SVG: opts.PlacementOut, Force: opts.Force}).check(); err != nil {
		return err
	}
	data, err := os.ReadFile(opts.TorchCSV)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return usageErrorf("%s: %v", opts.TorchCSV, err)
	}
	o.Name = opts.Name
	if o.Name == "" {
		o.Name = strings.TrimSuffix(filepath.Base(opts.TorchCSV), filepath.Ext(opts.TorchCSV))
	}
	naming, err := torchcsv.ParseNaming(opts.Naming)
	if err != nil {
		return usageErrorf("--torch-naming %v", err)
	}
	if opts.OverlapTime != "" {
		if o.Overlap, err = placement.ParseOverlapTime(opts.OverlapTime); err != nil {
			return usageErrorf("--overlap-time: %v", err)
		}
	}
	rd, err := torchcsv.Read(data, torchcsv.ReadOptions{Naming: naming, KeepOverlaps: o.Overlap != nil})
	var s *schedule.Schedule
	if err == nil {
		s, err = torchcsv.Import(rd.Table, *o)
	}
	if err != nil {
		return usageErrorf("%s: %v", opts.TorchCSV, err)
	}
	if opts.Out != "" {
		if err := (outputs{Out: opts.Out, Force: opts.Force}).write(s); err != nil {
			return err
		}
	}
	if opts.PlacementOut != "" {
		pj, err := render(s, func(s *schedule.Schedule, w io.Writer) error { return s.Placement.Write(w) })
		if err != nil {
			return err
		}
		if err := writeNew(opts.PlacementOut, opts.Force, pj); err != nil {
			return err
		}
	}
	for _, n := range rd.Notes {
		if _, err := fmt.Fprintf(stdout, "note: %s\n", n); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, torchcsv.ImportText(opts.TorchCSV, s))
	return err
}
