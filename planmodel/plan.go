package planmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/recompute"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// PlanOptions are the flags of tessel plan: the split (Partition), the
// schedule search of its placement and the files to write.
type PlanOptions struct {
	Report       string // tessel plan --report: the HTML page, "" for none
	Cluster      string // a cluster file, "" for none
	Partition    PartitionOptions
	PlacementOut string
	MicroBatches int
	Budget       int
	NR           int
	TimeLimit    time.Duration
	Decisions    placement.Decisions
	Outputs      outfile.Schedule
	JSON         bool
	// Parallel is "auto" for the DP × TP × PP layouts (package hybrid),
	// "" for a pipeline alone; Jobs, Effort and Top are its workers,
	// solver cap and printed rows.
	Parallel          string
	Jobs, Effort, Top int
	DP, TP, PP        int    // with --parallel auto: the degrees kept (0: any)
	Sizes             string // with --parallel auto: micro-batch sizes, "1,2,4"
}

// Plan is tessel plan: the split, the schedule of its placement (on its
// cluster, under the recompute policy where that is faster) beside the
// baselines and the levers, or with Parallel "auto" the DP × TP × PP
// layout; the files asked for written and the report printed.
func Plan(ctx context.Context, o PlanOptions, stdout io.Writer) error {
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
			return inputerr.Errorf("--report goes without --parallel (a plan of one layout)")
		}
		return parallel(ctx, o, stdout)
	}
	if o.Jobs != 0 || o.Effort != 0 || o.Top != 10 || o.DP != 0 || o.TP != 0 || o.PP != 0 || o.Sizes != "1" {
		return inputerr.Errorf("--jobs, --effort, --top, --dp, --tp, --pp and --micro-batch-sizes go with --parallel auto")
	}
	// The cluster is written below, with the budgets.
	clusterOut := o.Partition.ClusterOut
	o.Partition.ClusterOut = ""
	if clusterOut != "" && o.Cluster == "" {
		return inputerr.Errorf("--cluster-out needs --cluster")
	}
	if o.Report != "" && !o.Outputs.Force {
		if _, err := os.Stat(o.Report); err == nil {
			return inputerr.Errorf("%s exists (use --force to overwrite it)", o.Report)
		}
	}
	if clusterOut != "" && !o.Outputs.Force {
		if _, err := os.Stat(clusterOut); err == nil {
			return inputerr.Errorf("%s exists (use --force to overwrite it)", clusterOut)
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
		hr, err := onCluster(ctx, o.Partition, cl)
		if err != nil {
			return err
		}
		pr, cl = hr.PartitionReport(), hr.Cluster
		o.Partition.Capacities = cl.DeviceMemoryBytes()
	} else {
		var err error
		if pr, err = partitionModel(ctx, o.Partition); err != nil {
			return err
		}
	}
	p := pr.Converted.Placement
	if cl != nil {
		if len(cl.Devices) != p.Devices {
			return inputerr.Errorf("%s: cluster of %d devices for a placement of %d", o.Cluster, len(cl.Devices), p.Devices)
		}
		if o.Partition.Capacities != nil && !pr.Graph.Bytes {
			return inputerr.Errorf("%s: \"memory_bytes\" needs a profile in bytes (\"device_bytes\")", o.Cluster)
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
		return inputerr.Errorf("%v", ie.Err)
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
	out.TotalSeconds = textfmt.Secs(time.Since(t0))
	out.ScheduleFile, out.PlacementFile = o.Outputs.Out, o.PlacementOut
	if cmp != nil {
		out.Recompute = cmp.Summary()
	}
	if o.JSON {
		return textfmt.JSON(stdout, out)
	}
	if err := out.WriteText(stdout, report.TerminalUnits); err != nil {
		return err
	}
	if cmp != nil {
		report.Recompute(stdout, cmp)
	}
	return out.WriteVersusText(stdout)
}
