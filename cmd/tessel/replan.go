package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/timeline"
	"github.com/tessel-pp/tessel/verify"
)

// replanOptions are the flags of tessel replan.
type replanOptions struct {
	Schedule  string
	Cluster   clusterSpec
	NR        int
	Seed      int
	TimeLimit time.Duration
	Effort    int
	NoFresh   bool
	Refine    bool
	Timeline  string
	Model     string
	Outputs   outputs
}

func replanCommand() *cli.Command {
	return &cli.Command{
		Name:      "replan",
		Usage:     "a new schedule after the cluster changed, or after each change of a timeline (--timeline), warm-started from the last",
		UsageText: "tessel replan --schedule s.json --cluster new.json [--out new-s.json] [--json]",
		Description: "For a schedule file and a new cluster (a link slowed down, a device replaced), searches the\n" +
			"schedule of the same placement, micro-batches and budget there, starting from the old one: its\n" +
			"per-device orders compacted under the new times, and its repetend with offsets adapted and\n" +
			"re-timed, beside tessel search's constructions and baselines. A replan wants a good schedule\n" +
			"now, not a proof: every solver call is capped (--effort), and only greedy ends are re-optimised\n" +
			"(--refine: all). It reports the makespan and time beside a fresh search's (--no-fresh: not);\n" +
			"--timeline replans through a file of changes, each step from the last (docs/clusters.md,\n" +
			"docs/dynamic.md).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "the old schedule `FILE`"},
			clusterFlag("cluster"), clusterFlag("device-speed"), clusterFlag("transfer-time"), clusterFlag("channels"),
			&cli.IntFlag{Name: "nr", Usage: "largest N_R tried (0: as many as the memory budget allows, at most 2·devices)"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop each search after this long and keep the best schedule found"},
			&cli.IntFlag{Name: "effort", Usage: fmt.Sprintf("cap of every solver call of the replan, in Z3 resource units (0: %d, -1: none); larger finds shorter periods where the solver needs them, slower", search.ReplanEffort)},
			&cli.BoolFlag{Name: "no-fresh", Usage: "do not run a fresh search to compare with"},
			&cli.BoolFlag{Name: "refine", Usage: "let the solver re-optimise the ends of the new schedule whatever built it, as tessel search does (each call under the same cap; slower)"},
			&cli.StringFlag{Name: "model", Usage: "with --timeline: the layer profile `FILE` the schedule's placement was split from (tessel partition --model FILE --cluster C, C given as --cluster): where devices leave or join, the model is cut again onto the devices there, speed-aware, from the old stage boundaries (docs/dynamic.md)"},
			&cli.StringFlag{Name: "timeline", Usage: "replan step by step through a timeline `FILE` of changes (links, speeds, devices leaving or joining; docs/dynamic.md), each step from the last; --cluster is then the cluster the schedule ran on (default: its own)"},
		}, outputFlags()...),
		Action: func(c *cli.Context) error {
			return runReplan(c.Context, replanOptions{
				Schedule: c.String("schedule"), Cluster: clusterSpecFrom(c), NR: c.Int("nr"), Seed: c.Int("seed"),
				TimeLimit: c.Duration("time-limit"), Effort: c.Int("effort"), NoFresh: c.Bool("no-fresh"), Refine: c.Bool("refine"), Timeline: c.String("timeline"), Model: c.String("model"), Outputs: outputsFrom(c),
			}, c.App.Writer)
		},
	}
}

func runReplan(ctx context.Context, opts replanOptions, stdout io.Writer) error {
	if opts.Schedule == "" {
		return usageErrorf("replan: --schedule FILE is required")
	}
	if err := inputerr.AtLeast("nr", opts.NR, 0); err != nil {
		return err
	}
	if err := opts.Outputs.Check(); err != nil {
		return err
	}
	old, err := verify.Load(opts.Schedule)
	if err != nil {
		return err
	}
	cl, err := opts.Cluster.Cluster(old.Placement.Devices)
	if err != nil {
		return inputerr.Wrap(err)
	}
	if opts.Timeline != "" {
		return runTimeline(ctx, old, cl, opts, stdout)
	}
	if opts.Model != "" {
		return usageErrorf("replan: --model goes with --timeline")
	}
	if cl == nil {
		return usageErrorf("replan: give the new cluster: --cluster FILE, or --device-speed and --transfer-time")
	}
	given := old.Placement
	if old.Cluster != nil {
		given = old.Given
	}
	p, err := cl.Apply(given)
	if err != nil {
		return inputerr.Wrap(err)
	}
	t0 := time.Now()
	qctx, cancel := withLimit(ctx, opts.TimeLimit)
	ropt := search.ReplanOptions{MaxNR: opts.NR, Seed: opts.Seed, Effort: opts.Effort, Refine: opts.Refine}
	res, err := search.Replan(qctx, old, p, cl, ropt)
	cancel()
	took := time.Since(t0)
	if err != nil {
		return err
	}
	s := res.Schedule
	if err := verify.Schedule(s); err != nil {
		return fmt.Errorf("replan: the schedule fails verification (a bug): %w", err)
	}
	rep := report.NewReplanReport(old, p, res, took)
	if !opts.NoFresh {
		t1 := time.Now()
		fresh, err := choose.Fresh(ctx, p, old, ropt, opts.TimeLimit) // as tessel search
		if err != nil {
			return err
		}
		rep.Fresh, rep.FreshSeconds = ptr(schedule.Makespan(fresh.Schedule)), secs(time.Since(t1))
	}
	opts.Outputs.Cluster, opts.Outputs.Given = cl, given
	if err := opts.Outputs.Write(s); err != nil {
		return err
	}
	if opts.Outputs.JSON {
		return printJSON(stdout, rep)
	}
	rep.WriteText(stdout, p)
	return nil
}

// runTimeline is tessel replan --timeline: timeline.Run, printed.
func runTimeline(ctx context.Context, old *schedule.Schedule, cl *cluster.Cluster, opts replanOptions, stdout io.Writer) error {
	t, err := timeline.Load(opts.Timeline)
	if err != nil {
		return inputerr.Wrap(err)
	}
	topt := timeline.Options{
		Replan: search.ReplanOptions{MaxNR: opts.NR, Seed: opts.Seed, Effort: opts.Effort, Refine: opts.Refine},
		Fresh:  !opts.NoFresh, TimeLimit: opts.TimeLimit,
	}
	if opts.Model != "" {
		if opts.Cluster.File == "" {
			return usageErrorf("replan: --model needs --cluster FILE, the cluster the model was split onto (the timeline numbers its devices)")
		}
		g, err := partition.Load(opts.Model)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if g.IDs != nil {
			return usageErrorf("%s: --model needs a layer profile, not a graph of Tarnawski et al.'s set", opts.Model)
		}
		topt.Model = g
	}
	rep, err := timeline.Run(ctx, old, t, cl, topt)
	if err != nil {
		var ce *timeline.ChangeError
		if errors.As(err, &ce) || errors.Is(err, timeline.ErrNotModelSplit) || errors.Is(err, hetero.ErrNoSplit) {
			return inputerr.Wrap(err)
		}
		return err
	}
	if err := opts.Outputs.Write(rep.Final); err != nil {
		return err
	}
	if opts.Outputs.JSON {
		return printJSON(stdout, rep)
	}
	rep.WriteText(stdout)
	return nil
}
