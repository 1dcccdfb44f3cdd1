package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/megatron"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
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
	FSDP         fsdpOptions
	// A Megatron-Core layout instead of a CSV: the layout, the layer
	// count, the pipeline and virtual sizes, a split backward, and the
	// micro-batches and group size of Megatron-Core's order for --out.
	Megatron            string
	Layers, PP, VPP     int
	SplitBackward       bool
	MicroBatches, Group int
}

func importCommand() *cli.Command {
	d := torchcsv.DefaultImportOptions()
	return &cli.Command{
		Name:  "import",
		Usage: "read any PyTorch pipelining CSV (both formats, OVERLAP_F_B, BW) into a schedule tessel can verify, render and simulate",
		UsageText: "tessel import --torch-csv FILE [--forward-time T] [--backward-time T] [--input-time T] [--weight-time T] [--memory M] [--out FILE] [--placement-out FILE]\n" +
			"   tessel import --megatron-layout LAYOUT --num-layers N --pp P [--vpp V] [--split-backward] [--placement-out FILE] [--out FILE --micro-batches N [--group G]]",
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
			"search and compare --placement-file.\n\n" +
			"--megatron-layout reads a Megatron-Core --pipeline-model-parallel-layout instead (E embedding,\n" +
			"t transformer layer, m MTP layer, L loss, \"|\" between stages, X*N and (…)*N repeats), checked\n" +
			"as Megatron-Core checks it against --num-layers and --pp (and --vpp, else the layout's), and\n" +
			"prints the stages as Megatron-Core unrolls them, empty stages included. Its placement has one\n" +
			"device per rank, layout stage i on rank i mod P; the time and memory flags are per layer (E, t,\n" +
			"m, L each one), an empty stage takes time 1 and no memory. --out writes Megatron-Core's own\n" +
			"order of --micro-batches on it (interleaved 1F1B, micro-batch groups of --group, default P).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "torch-csv", Usage: "the CSV `FILE` to read (compute_only or compute_comms)"},
			&cli.StringFlag{Name: "megatron-layout", Usage: "read Megatron-Core's pipeline `LAYOUT` (--pipeline-model-parallel-layout) instead"},
			&cli.IntFlag{Name: "num-layers", Usage: "--megatron-layout: the transformer layers it must hold (Megatron-Core's --num-layers)"},
			&cli.IntFlag{Name: "pp", Usage: "--megatron-layout: the pipeline size (--pipeline-model-parallel-size)"},
			&cli.IntFlag{Name: "vpp", Usage: "--megatron-layout: the virtual stages per rank it must give (0: the layout's)"},
			&cli.BoolFlag{Name: "split-backward", Usage: "--megatron-layout: train each stage with input and weight gradients"},
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "--megatron-layout with --out: micro-batches of Megatron-Core's order"},
			&cli.IntFlag{Name: "group", Usage: "--megatron-layout with --out: Megatron-Core's micro-batch group size (0: the pipeline size)"},
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
		}, fsdpFlags(false)...),
		Action: func(c *cli.Context) error {
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
				OverlapTime: c.String("overlap-time"), FSDP: fsdpFromFlags(c),
				Megatron: c.String("megatron-layout"), Layers: c.Int("num-layers"), PP: c.Int("pp"), VPP: c.Int("vpp"),
				SplitBackward: c.Bool("split-backward"), MicroBatches: c.Int("micro-batches"), Group: c.Int("group"),
			}, c.App.Writer)
		},
	}
}

// runImport reads the CSV, builds and verifies the schedule, prints one
// line about it and writes the files asked for. Everything wrong with the
// file or the flags is a usage error (exit 2).
func runImport(_ context.Context, opts importOptions, stdout io.Writer) error {
	if opts.Megatron != "" {
		if opts.TorchCSV != "" {
			return usageErrorf("import: give one of --torch-csv and --megatron-layout")
		}
		return runImportMegatron(opts, stdout)
	}
	if opts.Layers != 0 || opts.PP != 0 || opts.VPP != 0 || opts.SplitBackward || opts.MicroBatches != 0 || opts.Group != 0 {
		return usageErrorf("import: --num-layers, --pp, --vpp, --split-backward, --micro-batches and --group go with --megatron-layout")
	}
	if opts.TorchCSV == "" {
		return usageErrorf("import: --torch-csv FILE is required (or --megatron-layout LAYOUT)")
	}
	o := &opts.Opt
	if err := o.Check(); err != nil {
		return inputerr.Wrap(err)
	}
	if err := inputerr.AtLeast("memory", o.Memory, 0); err != nil {
		return err
	}
	if opts.Out != "" && opts.Out == opts.PlacementOut {
		return usageErrorf("import: --out and --placement-out name the same file %s", opts.Out)
	}
	if err := (outfile.Schedule{Out: opts.Out, SVG: opts.PlacementOut, Force: opts.Force}).Check(); err != nil {
		return err
	}
	data, err := limits.ReadFile(opts.TorchCSV, limits.FileBytes)
	if err != nil {
		return inputerr.Wrap(err)
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
	s, fsdpText, err := importFSDP(rd, s, opts.FSDP, opts.TorchCSV)
	if err != nil {
		return err
	}
	if opts.Out != "" {
		if err := (outfile.Schedule{Out: opts.Out, Force: opts.Force}).Write(s); err != nil {
			return err
		}
	}
	if opts.PlacementOut != "" {
		pj, err := outfile.Drawn(s, func(s *schedule.Schedule, w io.Writer) error { return s.Placement.Write(w) })
		if err != nil {
			return err
		}
		if err := outfile.WriteNew(opts.PlacementOut, opts.Force, pj); err != nil {
			return err
		}
	}
	for _, n := range rd.Notes {
		if _, err := fmt.Fprintf(stdout, "note: %s\n", n); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, torchcsv.ImportText(opts.TorchCSV, s)+fsdpText)
	return err
}

// runImportMegatron reads a Megatron-Core layout: it prints its stages,
// writes its placement and, with --out, Megatron-Core's order on it.
func runImportMegatron(opts importOptions, stdout io.Writer) error {
	o := &opts.Opt
	switch {
	case opts.PP < 1:
		return usageErrorf("import: --megatron-layout needs --pp, the pipeline size")
	case opts.Layers < 0 || opts.VPP < 0 || opts.MicroBatches < 0 || opts.Group < 0:
		return usageErrorf("import: --num-layers, --vpp, --micro-batches and --group must be at least 0")
	case opts.Out != "" && opts.MicroBatches == 0:
		return usageErrorf("import: --out writes Megatron-Core's order: give --micro-batches")
	case opts.Out == "" && (opts.MicroBatches != 0 || opts.Group != 0):
		return usageErrorf("import: --micro-batches and --group go with --out")
	case opts.OverlapTime != "" || opts.Naming != "auto":
		return usageErrorf("import: --overlap-time and --torch-naming go with --torch-csv")
	}
	if err := o.Check(); err != nil {
		return inputerr.Wrap(err)
	}
	if err := (outfile.Schedule{Out: opts.Out, SVG: opts.PlacementOut, Force: opts.Force}).Check(); err != nil {
		return err
	}
	l, err := megatron.ParseLayout(opts.Megatron, megatron.LayoutOptions{Layers: opts.Layers, PP: opts.PP, VPP: opts.VPP})
	if err != nil {
		return inputerr.Wrap(err)
	}
	p, err := l.Placement(megatron.PlacementOptions{Name: opts.Name, ForwardTime: o.ForwardTime, BackwardTime: o.BackwardTime,
		InputTime: o.InputTime, WeightTime: o.WeightTime, ForwardMemory: o.ForwardMemory, BackwardMemory: o.BackwardMemory,
		InputMemory: o.InputMemory, WeightMemory: o.WeightMemory, SplitBackward: opts.SplitBackward})
	if err != nil {
		return inputerr.Wrap(err)
	}
	var s *schedule.Schedule
	if opts.Out != "" {
		if s, err = megatron.Order(spec.Spec{Placement: p, MicroBatches: opts.MicroBatches, Memory: o.Memory}, megatron.OrderOptions{Group: opts.Group}); err != nil {
			return inputerr.Wrap(err)
		}
		if err := (outfile.Schedule{Out: opts.Out, Force: opts.Force}).Write(s); err != nil {
			return err
		}
	}
	if opts.PlacementOut != "" {
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			return err
		}
		if err := outfile.WriteNew(opts.PlacementOut, opts.Force, b.Bytes()); err != nil {
			return err
		}
	}
	var b strings.Builder
	l.WriteText(&b)
	b.WriteString(l.Summary(p))
	if s != nil {
		b.WriteString(megatron.OrderText(s, opts.Group))
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
