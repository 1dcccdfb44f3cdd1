package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/megatron"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/torchcsv"
)

// exportOptions are the flags of tessel export.
type exportOptions struct {
	Schedule string
	Format   string
	Out      string
	Force    bool
	Split    string // torchtitan: the JSON of tessel partition --json
	MergeBW  bool   // I and W merged into B (PyTorch's _merge_bw)
	Recv     string // torch-csv-comms: early, deferred or auto
	FSDP     fsdpOptions
	Layout   string // megatron: the plan's layout (or Split)
	MoE      string // megatron: --moe-layer-freq
	CommTime int    // --recv auto: transfer time without a cluster
}

// exportFormats are the formats tessel export writes.
var exportFormats = []string{"torch-csv", "torch-csv-comms", "torchtitan", "megatron"}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write a schedule as PyTorch's pipelining CSV (compute only, or with sends and receives), a torchtitan bundle or Megatron-Core's arguments",
		UsageText: "tessel export --schedule FILE [--format torch-csv|torch-csv-comms|torchtitan] [--recv early|deferred|auto] [--merge-bw] [--out FILE] [--force]\n" +
			"   tessel export --schedule FILE --format torch-csv-comms --fsdp FILE [--max-active-stages N] [--unshard-lookahead tessel|full|auto|LIST]\n" +
			"   tessel export --schedule FILE --format megatron (--split FILE | --megatron-layout LAYOUT) [--moe-layer-freq F] [--merge-bw] [--out FILE]",
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
			"pairs and deadlock as its runtime runs them (receives posted without waiting, a\n" +
			"compute waiting for its input). --recv deferred moves each receive to just before\n" +
			"its consumer by PyTorch's _defer_recv_ops (the lower rank of a pair posts its receives\n" +
			"before its sends); auto takes the order whose run ends first where every rank's sends\n" +
			"and receives go one at a time (tessel simulate --torch-recv). torchtitan writes a folder\n" +
			"--out with schedule.csv and torchtitan_pipeline.py, a function that sets torchtitan's\n" +
			"configuration (fields as of torchtitan " + torchcsv.TitanCommit[:7] + ", August 2026) so that it builds the\n" +
			"stages the CSV runs (loop or V style; with --split, module_fqns_per_model_part), and for a\n" +
			"schedule under a per-stage recompute policy (plan --recompute) a FullAC subclass that recomputes\n" +
			"each stage's first transformer blocks, as planned (needs --split; docs/recompute-policy.md).\n" +
			"--merge-bw merges every I with its W into one B at the I's place first, for runtimes\n" +
			"that cannot split the backward (the schedule is compacted again and verified).\n\n" +
			"--fsdp FILE (torch-csv-comms) shards the stages it names over their data-parallel group\n" +
			"(docs/formats.md): UNSHARD before a stage computes, RESHARD, REDUCE_GRAD after its last\n" +
			"weight gradient, at most max_active_stages gathered at once on a rank; the computes wait for\n" +
			"their gathers, the peak counts the gathered parameters, and the verifier checks it all.\n" +
			"--unshard-lookahead tessel (default) places them no worse than PyTorch's \"full\" and \"auto\"\n" +
			"(compared on the same costs in the lines printed); full, auto or a list per rank writes\n" +
			"PyTorch's own placement (docs/torch.md).\n\n" +
			"megatron writes the Megatron-Core arguments of the plan, one per line (comments say what they\n" +
			"cannot): pipeline size, layout (from --split, the JSON of tessel partition --json, or\n" +
			"--megatron-layout; the virtual size is the layout's), layer counts, the micro-batch group size\n" +
			"(the one whose Megatron-Core order is the schedule's, else the one that ends first), the\n" +
			"all-to-all overlap for overlapped F&B pairs, --delay-wgrad-compute for a split backward, and the\n" +
			"recompute method and layers (a per-stage policy: the most layers of any stage, on every stage,\n" +
			"a comment saying where that is more than planned). It refuses what Megatron-Core rejects or hangs on, naming the stage:\n" +
			"a split backward without the overlap; with the overlap, a stage without transformer layers\n" +
			"(Megatron-LM's pipeline deadlocks on those) or with an odd number of MoE layers (its all-to-all overlap deadlocks; --moe-layer-freq).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: " + joinNames(exportFormats), Value: "torch-csv"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists"},
			&cli.StringFlag{Name: "split", Usage: "torchtitan, megatron: the JSON `FILE` of tessel partition --json, whose layer names are module names (megatron: Megatron-Core kinds)"},
			&cli.StringFlag{Name: "megatron-layout", Usage: "megatron: the plan's `LAYOUT` (Megatron-Core's --pipeline-model-parallel-layout), instead of --split"},
			&cli.StringFlag{Name: "moe-layer-freq", Usage: "megatron: which transformer layers are MoE, as Megatron-Core's --moe-layer-freq: N or [1,0,…]", Value: "1"},
			&cli.BoolFlag{Name: "merge-bw", Usage: "write every input gradient and its weight gradient merged into one full backward B, at the I's place (PyTorch's _merge_bw; for torchtitan where attention cannot split the backward)"},
			&cli.StringFlag{Name: "recv", Usage: "torch-csv-comms: where the receives go, " + joinNames(torchcsv.RecvOrders()) + " (PyTorch's _add_send_recv; its _defer_recv_ops; the shorter on serial links)", Value: "early"},
			&cli.IntFlag{Name: "comm-time", Usage: "--recv auto: the time of a transfer where the schedule has no cluster", Value: 1},
		}, fsdpFlags(true)...),
		Action: func(c *cli.Context) error {
			if c.IsSet("recv") && c.String("format") != "torch-csv-comms" {
				return usageErrorf("export: --recv applies to --format torch-csv-comms")
			}
			if c.IsSet("comm-time") && c.String("recv") != string(torchcsv.RecvAuto) {
				return usageErrorf("export: --comm-time applies to --recv auto")
			}
			if (c.IsSet("megatron-layout") || c.IsSet("moe-layer-freq")) && c.String("format") != "megatron" {
				return usageErrorf("export: --megatron-layout and --moe-layer-freq apply to --format megatron")
			}
			return runExport(c.Context, exportOptions{Schedule: c.String("schedule"), Format: c.String("format"),
				Layout: c.String("megatron-layout"), MoE: c.String("moe-layer-freq"),
				Out: c.String("out"), Force: c.Bool("force"), Split: c.String("split"), MergeBW: c.Bool("merge-bw"), Recv: c.String("recv"), CommTime: c.Int("comm-time"), FSDP: fsdpFromFlags(c)}, c.App.Writer)
		},
	}
}

// runExport converts a verified schedule file. A schedule whose placement
// is no chain of stages is bad input (exit 2), with the reason.
func runExport(ctx context.Context, opts exportOptions, stdout io.Writer) error {
	switch {
	case opts.Schedule == "":
		return usageErrorf("export: --schedule FILE is required")
	case !slices.Contains(exportFormats, opts.Format):
		return usageErrorf("export: --format must be one of %s, got %q", joinNames(exportFormats), opts.Format)
	case opts.Format == "torchtitan" && opts.Out == "":
		return usageErrorf("export: --format torchtitan writes a folder: give --out DIR")
	case opts.Split != "" && opts.Format != "torchtitan" && opts.Format != "megatron":
		return usageErrorf("export: --split applies to --format torchtitan and megatron")
	case opts.Format == "megatron" && (opts.Split == "") == (opts.Layout == ""):
		return usageErrorf("export: --format megatron takes the plan's split: give one of --split FILE and --megatron-layout LAYOUT")
	}
	switch opts.Format {
	case "torchtitan":
		return exportTitan(opts, stdout)
	case "megatron":
		return exportMegatron(opts, stdout)
	}
	s, merged, err := loadForExport(opts, opts.Out)
	if err != nil {
		return err
	}
	recv, err := torchcsv.ParseRecvOrder(opts.Recv)
	if err != nil {
		return usageErrorf("--recv %v", err)
	}
	if opts.CommTime < 0 {
		return usageErrorf("--comm-time must be at least 0, got %d", opts.CommTime)
	}
	if opts.FSDP.File != "" {
		return exportFSDP(ctx, opts, s, recv, stdout)
	}
	if _, err := opts.FSDP.model(s); err != nil {
		return err
	}
	tab, data, form, err := torchcsv.ExportCSVWith(s, torchcsv.CSVOptions{Comms: opts.Format == "torch-csv-comms",
		Lowering: torchcsv.CommsOptions{Recv: recv, CommTime: opts.CommTime}})
	if err != nil {
		return usageErrorf("%s: cannot export to PyTorch's CSV: %v", opts.Schedule, err)
	}
	if opts.Out == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := outfile.WriteNew(opts.Out, opts.Force, data); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: %d ranks, %d stages, %d micro-batches (PyTorch pipelining CSV, %s)%s\n",
		opts.Out, len(tab.Rows), tab.Stages(), s.MicroBatches, form, merged)
	return err
}

// loadForExport checks that the files to write (outs; "" for stdout)
// may be written, reads and verifies the schedule to export and, with
// --merge-bw, merges its backwards; merged is what the "wrote" line adds
// then ("; I and W merged into B: makespan M instead of S").
func loadForExport(opts exportOptions, outs ...string) (s *schedule.Schedule, merged string, err error) {
	if err := outfile.Check(opts.Force, outs...); err != nil {
		return nil, "", err
	}
	return loadMerged(opts)
}

// loadMerged reads and verifies the schedule to export, merging its
// backwards with --merge-bw (loadForExport).
func loadMerged(opts exportOptions) (s *schedule.Schedule, merged string, err error) {
	if s, err = loadVerified(opts.Schedule); err != nil || !opts.MergeBW {
		return s, "", err
	}
	m, err := torchcsv.MergeBackward(s)
	if err != nil {
		return nil, "", usageErrorf("%s: --merge-bw: %v", opts.Schedule, err)
	}
	if m != s {
		merged = fmt.Sprintf("; I and W merged into B: makespan %d instead of %d", schedule.Makespan(m), schedule.Makespan(s))
	}
	return m, merged, nil
}

// exportTitan writes the torchtitan bundle: the folder opts.Out with
// schedule.csv and the settings (torchcsv.TitanSettingsFile).
func exportTitan(opts exportOptions, stdout io.Writer) error {
	csvPath, pyPath := filepath.Join(opts.Out, "schedule.csv"), filepath.Join(opts.Out, torchcsv.TitanSettingsFile)
	if err := outfile.CheckDir(opts.Out, true); err != nil {
		return err
	}
	if err := outfile.CheckNew(opts.Force, csvPath, pyPath); err != nil {
		return err
	}
	s, merged, err := loadMerged(opts)
	if err != nil {
		return err
	}
	var to torchcsv.TitanOptions
	if opts.Split != "" {
		data, err := limits.ReadFile(opts.Split, limits.FileBytes)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if to.Modules, to.StageDevices, err = partition.ReadStages(data); err != nil {
			return usageErrorf("%s: %v", opts.Split, err)
		}
	}
	b, err := torchcsv.Titan(s, to)
	if err != nil {
		return usageErrorf("%s: cannot export to torchtitan: %v", opts.Schedule, err)
	}
	bundle := []outfile.File{{Path: "schedule.csv", Data: b.Table.Marshal()}, {Path: torchcsv.TitanSettingsFile, Data: b.Config(csvPath)}}
	if err := outfile.WriteDir(opts.Out, opts.Force, bundle); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s and %s: %d ranks, %d stages (%s style, %d per rank), %d micro-batches%s\n",
		csvPath, pyPath, b.Ranks, b.Stages, b.Style, b.StagesPerRank, b.MicroBatches, merged)
	return err
}

// exportMegatron writes the Megatron-Core arguments of the plan.
func exportMegatron(opts exportOptions, stdout io.Writer) error {
	s, merged, err := loadForExport(opts, opts.Out)
	if err != nil {
		return err
	}
	var l *megatron.Layout
	if opts.Split != "" {
		data, err := limits.ReadFile(opts.Split, limits.FileBytes)
		if err != nil {
			return inputerr.Wrap(err)
		}
		names, _, err := partition.ReadStages(data)
		if err == nil {
			l, err = megatron.LayoutOfSplit(names, s.Placement.Devices)
		}
		if err != nil {
			return usageErrorf("%s: %v", opts.Split, err)
		}
	} else if l, err = megatron.ParseLayout(opts.Layout, megatron.LayoutOptions{PP: s.Placement.Devices}); err != nil {
		return usageErrorf("--megatron-layout: %v", err)
	}
	moe, err := megatron.ParseMoELayerFreq(opts.MoE, l.Layers)
	if err != nil {
		return usageErrorf("--moe-layer-freq: %v", err)
	}
	a, err := megatron.Arguments(s, megatron.ArgsOptions{Layout: l, MoE: moe, Source: opts.Schedule})
	if err != nil {
		return usageErrorf("%s: cannot export to Megatron-Core: %v", opts.Schedule, err)
	}
	if opts.Out == "" {
		_, err := stdout.Write(a.Text())
		return err
	}
	if err := outfile.WriteNew(opts.Out, opts.Force, a.Text()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: Megatron-Core arguments, %d ranks, %d stages (%d per rank)%s\n", opts.Out, l.PP, len(l.Stages), l.VPP, merged)
	return err
}
