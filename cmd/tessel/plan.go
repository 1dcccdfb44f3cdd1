package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hybrid"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/recompute"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

type planOptions struct {
	Report       string // tessel plan --report: the HTML page, "" for none
	Cluster      string // a cluster file, "" for none
	Partition    partitionOptions
	PlacementOut string
	MicroBatches int
	Budget       int
	NR           int
	TimeLimit    time.Duration
	Decisions    placement.Decisions
	Outputs      outputs
	// Parallel is "auto" for the DP × TP × PP layouts (package hybrid),
	// "" for a pipeline alone; Jobs, Effort and Top are its workers,
	// solver cap and printed rows.
	Parallel          string
	Jobs, Effort, Top int
	DP, TP, PP        int    // with --parallel auto: the degrees kept (0: any)
	Sizes             string // with --parallel auto: micro-batch sizes, "1,2,4"
}

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
			po := partitionOptionsFrom(c)
			po.Out = c.String("placement-out")
			po.ClusterOut = c.String("cluster-out")
			return runPlan(c.Context, planOptions{
				Partition: po, PlacementOut: po.Out, Report: c.String("report"), MicroBatches: c.Int("micro-batches"), Budget: c.Int("budget"),
				NR: c.Int("nr"), TimeLimit: c.Duration("time-limit"), Decisions: savingsFrom(c), Outputs: outputsFrom(c), Cluster: c.String("cluster"),
				Parallel: c.String("parallel"), Jobs: c.Int("jobs"), Effort: c.Int("effort"), Top: c.Int("top"),
				DP: c.Int("dp"), TP: c.Int("tp"), PP: c.Int("pp"), Sizes: c.String("micro-batch-sizes"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runPlan(ctx context.Context, o planOptions, stdout, stderr io.Writer) error {
	if err := inputerr.AtLeast("micro-batches", o.MicroBatches, 1); err != nil {
		return err
	}
	if err := inputerr.AtLeast("budget", o.Budget, 0); err != nil {
		return err
	}
	if err := inputerr.AtLeast("nr", o.NR, 0); err != nil {
		return err
	}
	o.Partition.Force = o.Outputs.Force
	if err := o.Outputs.Check(); err != nil {
		return err
	}
	if o.Parallel != "" {
		if o.Report != "" {
			return usageErrorf("--report goes without --parallel (a plan of one layout)")
		}
		return runHybrid(ctx, o, stdout)
	}
	if o.Jobs != 0 || o.Effort != 0 || o.Top != 10 || o.DP != 0 || o.TP != 0 || o.PP != 0 || o.Sizes != "1" {
		return usageErrorf("--jobs, --effort, --top, --dp, --tp, --pp and --micro-batch-sizes go with --parallel auto")
	}
	// The cluster is written below, with the budgets.
	clusterOut := o.Partition.ClusterOut
	o.Partition.ClusterOut = ""
	if clusterOut != "" && o.Cluster == "" {
		return usageErrorf("--cluster-out needs --cluster")
	}
	if o.Report != "" && !o.Outputs.Force {
		if _, err := os.Stat(o.Report); err == nil {
			return usageErrorf("%s exists (use --force to overwrite it)", o.Report)
		}
	}
	if clusterOut != "" && !o.Outputs.Force {
		if _, err := os.Stat(clusterOut); err == nil {
			return usageErrorf("%s exists (use --force to overwrite it)", clusterOut)
		}
	}
	t0 := time.Now()
	var cl *cluster.Cluster
	var pr *partition.Report
	if o.Cluster != "" {
		var err error
		if cl, err = cluster.Load(o.Cluster); err != nil {
			return inputerr.Wrap(err)
		}
		// The split on the cluster; from here on the cluster is as its
		// placement runs on it (device i: stage i's device).
		o.Partition.Cluster = o.Cluster
		hr, err := partitionOnCluster(ctx, o.Partition, cl)
		if err != nil {
			return err
		}
		pr, cl = hr.PartitionReport(), hr.Cluster
		o.Partition.Capacities = cl.DeviceMemoryBytes()
	} else {
		var err error
		if pr, err = partitionModel(ctx, o.Partition, stderr); err != nil {
			return err
		}
	}
	p := pr.Converted.Placement
	if cl != nil {
		if len(cl.Devices) != p.Devices {
			return usageErrorf("%s: cluster of %d devices for a placement of %d", o.Cluster, len(cl.Devices), p.Devices)
		}
		if o.Partition.Capacities != nil && !pr.Graph.Bytes {
			return usageErrorf("%s: \"memory_bytes\" needs a profile in bytes (\"device_bytes\")", o.Cluster)
		}
	}
	if err := spec.CheckDeclarations(o.Decisions); err != nil {
		return inputerr.Wrap(err)
	}
	popt := plan.Options{MicroBatches: o.MicroBatches, Budget: o.Budget, Cluster: cl, Capacities: o.Partition.Capacities,
		Decisions: o.Decisions, Search: search.Options{MaxNR: o.NR}, TimeLimit: o.TimeLimit}
	var res *plan.Result
	var cmp *recompute.Comparison
	var err error
	if o.Decisions.Recompute {
		// Per-instance decisions beside the per-stage policy frameworks
		// apply; the faster is the plan (docs/recompute-policy.md).
		if cmp, err = recompute.Compare(ctx, pr, popt); err == nil {
			res = cmp.Chosen()
		}
	} else {
		res, err = plan.Run(ctx, pr, popt)
	}
	var ie *plan.InputError
	switch {
	case errors.As(err, &ie) && ie.Cluster:
		return inputerr.Wrap(fmt.Errorf("%s: %w", o.Cluster, ie.Err))
	case errors.As(err, &ie):
		return usageErrorf("%v", ie.Err)
	case errors.Is(err, search.ErrNoRepetend):
		return fmt.Errorf("%w (raise --budget or --nr)", err)
	case err != nil:
		return err
	}
	if clusterOut != "" {
		if err := outfile.WriteDrawn(clusterOut, o.Outputs.Force, res.BudgetCluster().Write); err != nil {
			return err
		}
	}
	if err := o.Outputs.Write(res.Search.Schedule); err != nil {
		return err
	}
	if cmp != nil && cmp.PolicyChosen && o.PlacementOut != "" {
		// The placement searched is the split's under the policy: the
		// file partition wrote above becomes that one.
		if err := outfile.WriteDrawn(o.PlacementOut, true, res.Partition.Converted.Placement.Write); err != nil {
			return err
		}
	}
	out := report.NewPlan(res)
	levers, err := plan.Levers(ctx, pr, popt, res)
	if err != nil {
		return err
	}
	rows, err := plan.Versus(ctx, res)
	if err != nil {
		return err
	}
	out.SetVersus(rows, levers)
	if o.Report != "" {
		if err := outfile.WriteDrawn(o.Report, o.Outputs.Force, out.WriteHTML); err != nil {
			return err
		}
	}
	out.TotalSeconds = secs(time.Since(t0))
	out.ScheduleFile, out.PlacementFile = o.Outputs.Out, o.PlacementOut
	if cmp != nil {
		out.Recompute = cmp.Summary()
	}
	if o.Outputs.JSON {
		return printJSON(stdout, out)
	}
	if err := out.WriteText(stdout, textUnits); err != nil {
		return err
	}
	if cmp != nil {
		cmp.WriteText(stdout)
	}
	return out.WriteVersusText(stdout)
}
