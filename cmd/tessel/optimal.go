package main

import (
	"context"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

type optimalOptions struct {
	Placement    placementSpec
	MicroBatches int
	Memory       int
	TimeLimit    time.Duration
	Seed         int
	Decisions    placement.Decisions
	Latency      int
	Outputs      outputs
	Coarsen      int  // --coarsen: 0 never, N blocks
	LinkOrder    bool // --link-order
}

func optimalCommand() *cli.Command {
	return &cli.Command{
		Name:  "optimal",
		Usage: "search the time-optimal schedule of a few micro-batches (the paper's TO baseline)",
		UsageText: "tessel optimal --placement v-shape --devices 4 --micro-batches 6 --memory 16 [--forward-time 1 --backward-time 2]\n" +
			"   tessel optimal --placement-file my.json --micro-batches 4 --time-limit 60s --out s.json",
		Description: "Encodes every block of every micro-batch in Z3 and minimises the makespan by binary search\n" +
			"between a proven lower bound and the best of the constructions and baselines, so its answer is\n" +
			"never worse than theirs. Exact, but the time grows quickly with N: use tessel search for many\n" +
			"micro-batches. With --time-limit it returns the best schedule found,\n" +
			"marked as not proven. Every schedule printed or written has passed the verifier.",
		Flags: append(append(placementFlags(),
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N", Value: 4},
			&cli.IntFlag{Name: "memory", Aliases: []string{"m"}, Usage: "per-device memory budget (0: unlimited)"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop after this long and return the best schedule found (e.g. 60s, 5m)"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			coarsenFlag("optimal"),
			latencyBudgetFlag(),
			&cli.BoolFlag{Name: "link-order", Usage: "with --channels, the solver chooses the order of the transfers on each link instead of their producers' order; the schedule records it (\"link_order\")"},
		), append(savingsFlags(), outputFlags()...)...),
		Action: func(c *cli.Context) error {
			spec := placementSpecFrom(c)
			spec.Choose = true
			return runOptimal(c.Context, optimalOptions{
				Placement: spec, MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				TimeLimit: c.Duration("time-limit"), Seed: c.Int("seed"), Decisions: savingsFrom(c), Outputs: outputsFrom(c),
				Coarsen: c.Int("coarsen"),
				Latency: c.Int("latency-budget"), LinkOrder: c.Bool("link-order"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runOptimal(ctx context.Context, opts optimalOptions, stdout, stderr io.Writer) error {
	if err := inputerr.AtLeast("micro-batches", opts.MicroBatches, 1); err != nil {
		return err
	}
	if err := inputerr.AtLeast("memory", opts.Memory, 0); err != nil {
		return err
	}
	if err := inputerr.AtLeast("latency-budget", opts.Latency, 0); err != nil {
		return err
	}
	if err := opts.Outputs.Check(); err != nil {
		return err
	}
	p, given, cl, err := opts.Placement.LoadFor(opts.Decisions)
	if err != nil {
		return inputerr.Wrap(err)
	}
	if p.Overlap != nil {
		return usageErrorf("optimal: the time-optimal search does not pair forwards and backwards (--overlap-time): run tessel search")
	}
	target, err := coarsenTarget(p, opts.Coarsen)
	if err != nil {
		return err
	}
	if opts.LinkOrder {
		switch {
		case !p.Channels:
			return usageErrorf("optimal: --link-order needs links that carry one transfer at a time (--channels, or \"channels\": true in the cluster file)")
		case len(p.Lanes) > 0:
			return usageErrorf("optimal: --link-order is not supported where device pairs have several links")
		case target > 0 && len(p.Blocks) > target:
			return usageErrorf("optimal: --link-order does not combine with --coarsen")
		}
	}
	opts.Outputs.Cluster, opts.Outputs.Given = cl, given
	ctx, cancel := withLimit(ctx, opts.TimeLimit)
	defer cancel()
	bar := newProgress(stderr)
	t0 := time.Now()
	sp := spec.Spec{Placement: p, MicroBatches: opts.MicroBatches, Memory: opts.Memory, Latency: opts.Latency,
		Allowed: spec.Decisions{Offload: opts.Decisions.Offload, Recompute: opts.Decisions.Recompute}}
	oopt := search.OptimalOptions{
		Seed: opts.Seed, LinkOrder: opts.LinkOrder,
		Progress: func(lo, hi int) {
			bar.show("optimal: makespan between %d and %d (%s)", lo, hi, time.Since(t0).Round(time.Second))
		},
	}
	if target > 0 && len(p.Blocks) > target {
		cr, err := choose.Optimal(ctx, sp, choose.OptimalOptions{Search: oopt, Coarsen: target})
		bar.done()
		if err != nil {
			return err
		}
		return writeCoarsened(cr.Schedule, report.NewCoarsenSummary(cr.Schedule, *cr.Coarsened, cr.Total), "optimal", opts.Outputs, stdout)
	}
	res, err := choose.OptimalDevices(ctx, sp, choose.OptimalOptions{Search: oopt})
	bar.done()
	elapsed := time.Since(t0)
	if err != nil {
		return err
	}
	s := res.Schedule
	if err := opts.Outputs.WriteVerified("optimal", s); err != nil {
		return err
	}
	sum := report.OptimalSummary(res, elapsed, opts.Decisions.Any())
	if opts.Outputs.JSON {
		return printJSON(stdout, sum)
	}
	return report.OptimalText(stdout, res, sum, report.TextOptions{Placement: p, Memory: opts.Memory, MicroBatches: opts.MicroBatches,
		Decisions: opts.Decisions.Any(), Units: 2 * textUnits}, elapsed)
}
