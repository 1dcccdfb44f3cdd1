package main

import (
	"time"

	"github.com/tessel-pp/tessel/planmodel"
	"github.com/urfave/cli/v2"
)

func partitionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "the model: a layer profile or a graph in Tarnawski et al.'s format (JSON `FILE`, see docs/formats.md)"},
		&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "accelerators k", DefaultText: "the model's \"devices\" or maxFPGAs"},
		&cli.IntFlag{Name: "cpus", Usage: "CPU cores ℓ (graphs in Tarnawski et al.'s format only)", Value: -1, DefaultText: "the model's maxCPUs"},
		&cli.Float64Flag{Name: "memory", Aliases: []string{"m"}, Usage: "memory cap of one accelerator, in the model's unit (0: none)", DefaultText: "the model's"},
		&cli.StringFlag{Name: "order", Usage: "with --chunks: stage s on device s mod D (loop) or down and back up (v, 2 chunks)", Value: "loop"},
		&cli.IntFlag{Name: "chunks", Usage: "stages per device C (interleaved placements: C·D stages; with plan --parallel auto: every count from 1 to C tried)", Value: 1},
		&cli.BoolFlag{Name: "empty-stages", Usage: "with --chunks: let stages hold no layer where that balances the devices best, or where there are fewer layers than stages (Megatron-Core's layouts allow empty stages)"},
		&cli.BoolFlag{Name: "non-contiguous", Usage: "the max-load integer program (Z3) instead of the DP: stages need not be contiguous"},
		&cli.DurationFlag{Name: "ip-time-limit", Usage: "time limit of --non-contiguous; the best split found and its gap are reported", Value: 60 * time.Second},
		&cli.StringFlag{Name: "expert", Usage: "also evaluate a given split, a JSON `FILE` in Tarnawski et al.'s expert format (node ids per accelerator)"},
		&cli.Float64Flag{Name: "time-unit", Usage: "model time of one step of the schedule search's coarse copy of the placement (the placement itself times every block and transfer within 0.5%, and the search's schedule is timed again there)", DefaultText: "the smallest block time over the least k ≤ 10 that keeps every block within 5%"},
		&cli.Float64Flag{Name: "memory-unit", Usage: "activation memory of one placement memory unit", DefaultText: "1 per stage, the Tessel paper's convention"},
	}
}

// partitionOptionsFrom reads partitionFlags; bar shows the progress.
func partitionOptionsFrom(c *cli.Context, bar *progress) planmodel.PartitionOptions {
	o := planmodel.PartitionOptions{
		Model: c.String("model"), Devices: c.Int("devices"), CPUs: c.Int("cpus"), Order: c.String("order"), Chunks: c.Int("chunks"),
		EmptyStages: c.Bool("empty-stages"), NonContiguous: c.Bool("non-contiguous"), IPTimeLimit: c.Duration("ip-time-limit"), Expert: c.String("expert"),
		TimeUnit: c.Float64("time-unit"), MemoryUnit: c.Float64("memory-unit"), Force: c.Bool("force"), JSON: c.Bool("json"),
		Stderr: bar.clearing(c.App.ErrWriter), Progress: bar.line,
	}
	if c.IsSet("memory") {
		m := c.Float64("memory")
		o.Memory = &m
	}
	return o
}

func partitionCommand() *cli.Command {
	return &cli.Command{
		Name:  "partition",
		Usage: "cut a model into pipeline stages of least time per sample (Tarnawski et al.'s DP or IP; --cluster for mixed devices) or of least latency (--objective latency), and write a placement",
		UsageText: "tessel partition --model gpt.json --devices 4 --out gpt-placement.json\n" +
			"   tessel partition --model bert24_training.json            (a graph in Tarnawski et al.'s format: its own k, ℓ and cap)\n" +
			"   tessel partition --model gpt.json --devices 4 --chunks 2 --order v --out p.json\n" +
			"   tessel partition --model bert_l-3_inference.json --non-contiguous --ip-time-limit 30s",
		Description: "Finds the contiguous split of least maximum load onto k accelerators and ℓ CPU cores under the\n" +
			"memory cap by dynamic programming over the ideals of the graph (Tarnawski et al., §5.1.1; a layer's\n" +
			"forward and backward on one device, appendix B), or, with --non-contiguous, any split by the\n" +
			"max-load integer program solved with Z3 (the best found within --ip-time-limit, with its gap).\n" +
			"The max load is the time per sample of a pipeline without bubbles. Beside it: the even split by\n" +
			"layer count, a greedy fill and, with --expert, a given split. --out writes a placement for\n" +
			"tessel search: stages become blocks on their devices, timed within 0.5% (the placement's \"units\";\n" +
			"the search runs on a coarse copy at --time-unit steps and its schedule is timed again at the placement's).",
		Flags: append(partitionFlags(),
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the placement to a JSON `FILE` (for tessel search --placement-file)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON summary instead of text"},
			&cli.StringFlag{Name: "format", Usage: "text, or megatron-layout: Megatron-Core's --pipeline-model-parallel-layout of the split (layers named embedding, decoder.N, mtp, loss)", Value: "text"},
			&cli.StringFlag{Name: "cluster", Usage: "split onto the devices of the cluster in a JSON `FILE`: each stage's time on its device, each device's memory, the device order chosen (docs/heterogeneous.md)"},
			&cli.StringFlag{Name: "cluster-out", Usage: "with --cluster: write the cluster as the placement of --out runs on it (device i: stage i's device) to a JSON `FILE`"},
			&cli.StringFlag{Name: "objective", Usage: "max-load (time per sample of a pipeline), or latency: the split of least single-sample latency by Tarnawski et al.'s integer program (§4, Z3; inference graphs), beside the greedy fill and the max-load DP's split", Value: "max-load"},
			&cli.DurationFlag{Name: "time-limit", Usage: "with --objective latency: time limit of the integer program; the best split found and its gap are reported", Value: 60 * time.Second},
			&cli.IntFlag{Name: "subgraphs", Usage: "with --objective latency --non-contiguous: contiguous subgraphs per accelerator (q of Tarnawski et al. §4.1)", Value: 2},
			&cli.BoolFlag{Name: "paper-memory", Usage: "with --objective latency: Tarnawski et al.'s memory-bound setting (§7) from the model's size: 600 MiB (≤ 3.6 GB) or 2 GiB (≥ 9 GB) accelerators holding 1.5× the model, 8 CPU cores"},
			&cli.Float64Flag{Name: "comm-scale", Usage: "with --objective latency: multiply every transfer cost by this factor (1000 reproduces Tarnawski et al.'s Table 4, see docs/partition.md)", Value: 1},
		),
		Action: func(c *cli.Context) error {
			bar := newProgress(c.App.ErrWriter)
			defer bar.done()
			o := partitionOptionsFrom(c, bar)
			o.Out, o.Format = c.String("out"), c.String("format")
			o.Cluster, o.ClusterOut = c.String("cluster"), c.String("cluster-out")
			o.Objective, o.TimeLimit, o.Subgraphs = c.String("objective"), c.Duration("time-limit"), c.Int("subgraphs")
			o.PaperMemory, o.CommScale = c.Bool("paper-memory"), c.Float64("comm-scale")
			if o.Objective == "latency" {
				for _, f := range []string{"chunks", "order", "out", "format", "ip-time-limit", "time-unit", "memory-unit", "cluster", "cluster-out"} {
					if c.IsSet(f) {
						return usageErrorf("--%s does not go with --objective latency", f)
					}
				}
				if o.PaperMemory {
					for _, f := range []string{"devices", "memory", "cpus"} {
						if c.IsSet(f) {
							return usageErrorf("--%s and --paper-memory do not go together", f)
						}
					}
				}
				if !o.NonContiguous && c.IsSet("subgraphs") {
					return usageErrorf("--subgraphs goes with --non-contiguous")
				}
				return planmodel.SampleLatency(c.Context, o, bar.clearing(c.App.Writer))
			}
			if o.Objective != "max-load" {
				return usageErrorf("--objective must be max-load or latency, got %q", o.Objective)
			}
			for _, f := range []string{"time-limit", "subgraphs", "paper-memory", "comm-scale"} {
				if c.IsSet(f) {
					return usageErrorf("--%s goes with --objective latency", f)
				}
			}
			return planmodel.Partition(c.Context, o, bar.clearing(c.App.Writer))
		},
	}
}
