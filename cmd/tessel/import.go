package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/torchcsv"
)

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
			return deploy.Import(c.Context, deploy.ImportOptions{
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
