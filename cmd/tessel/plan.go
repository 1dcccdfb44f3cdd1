package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/hybrid"
	"github.com/tessel-pp/tessel/planmodel"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "from a model to a schedule: tessel partition, then tessel search on its placement; --parallel auto picks the DP × TP × PP layout on a cluster",
		UsageText: "tessel plan --model gpt.json --devices 4 --micro-batches 64\n" +
			"   tessel plan --model gpt.json --devices 4 --budget 6 --out s.json --placement-out p.json",
		Description: "Cuts the model into stages of least time per sample (tessel partition; its flags apply), turns\n" +
			"the split into a placement and searches its schedule (tessel search) for --micro-batches under\n" +
			"--budget, the per-device memory budget of the placement (its units: see --memory-unit).\n" +
			"Reports the split's time per sample beside the even split's and the greedy fill's, and the\n" +
			"schedule's makespan and bubble rate in the model's units (ms, s, GB where the model states them).\n" +
			"The search runs on a coarse copy of the placement (--time-unit); its schedule is timed again with\n" +
			"every block and transfer at its own time and has passed the verifier there. With --recompute it\n" +
			"also plans the per-stage policy frameworks apply (each stage recomputes its first k layers in\n" +
			"every micro-batch, k the least that fits; Megatron-Core's --recompute-num-layers, torchtitan's\n" +
			"checkpointing), keeps the faster of that and the per-instance decisions, and says what the other\n" +
			"costs (docs/recompute-policy.md). Then the schedules a user would otherwise run (1F1B or\n" +
			"interleaved 1F1B, ZB-H1/H2, ZB-V, DualPipeV, 1F1B + full recompute, PipeOffload, where they\n" +
			"apply) on the same stages, devices and budgets: time per iteration, peak memory, the winner and\n" +
			"its margin; where the budget binds, the plan again with --recompute and with --offload.\n" +
			"--report FILE.html writes all of it as one page (docs/commands.md#tessel-partition-tessel-plan).",
		Flags: append(append(partitionFlags(),
			&cli.StringFlag{Name: "placement-out", Usage: "also write the placement to a JSON `FILE`"},
			&cli.StringFlag{Name: "report", Usage: "also write one HTML page: the plan against the baselines, the Gantt chart, each device's memory, to `FILE.html`"},
			&cli.StringFlag{Name: "cluster-out", Usage: "with --cluster: also write the cluster as the placement of --placement-out runs on it (device i: stage i's device), each device's memory its schedule budget in placement units, to a JSON `FILE` (for tessel compare --placement-file P --cluster C)"},
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N of the schedule", Value: 64},
			&cli.IntFlag{Name: "budget", Usage: "per-device memory budget of the schedule search, in placement memory units (0: unlimited)"},
			&cli.IntFlag{Name: "nr", Usage: "largest N_R tried (0: as the budget allows, at most 2·devices)"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop the schedule search after this long and keep the best schedule found"},
			&cli.StringFlag{Name: "cluster", Usage: "split the model on the cluster in a JSON `FILE` (each stage's time on its device, the device order chosen) and run the placement there: device speeds, links, host links and, for a profile in bytes, each device's \"memory_bytes\""},
			&cli.StringFlag{Name: "parallel", Usage: "auto: choose the data-, tensor- and pipeline-parallel degrees on --cluster by simulating every layout that can fit and win (docs/heterogeneous.md)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "with --parallel auto: layouts evaluated at once (0: one per core); the answer does not depend on it"},
			&cli.IntFlag{Name: "effort", Usage: fmt.Sprintf("with --parallel auto: cap of every solver call of a layout's schedule search, in Z3 resource units (0: %d)", hybrid.DefaultEffort)},
			&cli.IntFlag{Name: "top", Usage: "with --parallel auto: layouts printed (0: all; --json lists all)", Value: 10},
			&cli.IntFlag{Name: "dp", Usage: "with --parallel auto: keep the layouts of this data-parallel degree only (0: any)"},
			&cli.IntFlag{Name: "tp", Usage: "with --parallel auto: keep the layouts of this tensor-parallel degree only (0: any)"},
			&cli.IntFlag{Name: "pp", Usage: "with --parallel auto: keep the layouts of this pipeline-parallel degree only (0: any)"},
			&cli.StringFlag{Name: "micro-batch-sizes", Usage: "with --parallel auto: micro-batch sizes tried, in samples, `B,...` (--micro-batches is then the samples per iteration)", Value: "1"},
		), append(savingsFlags(), outputFlags()...)...),
		Action: func(c *cli.Context) error {
			bar := newProgress(c.App.ErrWriter)
			defer bar.done()
			po := partitionOptionsFrom(c, bar)
			po.Out = c.String("placement-out")
			po.ClusterOut = c.String("cluster-out")
			return planmodel.Plan(c.Context, planmodel.PlanOptions{
				Partition: po, PlacementOut: po.Out, Report: c.String("report"), MicroBatches: c.Int("micro-batches"), Budget: c.Int("budget"),
				NR: c.Int("nr"), TimeLimit: c.Duration("time-limit"), Decisions: savingsFrom(c), Outputs: outputsFrom(c), JSON: c.Bool("json"), Cluster: c.String("cluster"),
				Parallel: c.String("parallel"), Jobs: c.Int("jobs"), Effort: c.Int("effort"), Top: c.Int("top"),
				DP: c.Int("dp"), TP: c.Int("tp"), PP: c.Int("pp"), Sizes: c.String("micro-batch-sizes"),
			}, bar.clearing(c.App.Writer))
		},
	}
}
