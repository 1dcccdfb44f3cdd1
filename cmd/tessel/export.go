package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/torchcsv"
)

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
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: " + joinNames(deploy.ExportFormats()), Value: "torch-csv"},
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
			return deploy.Export(c.Context, deploy.ExportOptions{Schedule: c.String("schedule"), Format: c.String("format"),
				Layout: c.String("megatron-layout"), MoE: c.String("moe-layer-freq"),
				Out: c.String("out"), Force: c.Bool("force"), Split: c.String("split"), MergeBW: c.Bool("merge-bw"), Recv: c.String("recv"), CommTime: c.Int("comm-time"), FSDP: fsdpFromFlags(c)}, c.App.Writer)
		},
	}
}
