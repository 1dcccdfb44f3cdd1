package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"tessel/completion"
	"tessel/schedule"
)

// replanOptions are the flags of tessel replan.
type replanOptions struct {
	Schedule  string
	Cluster   clusterSpec
	NR        int
	Seed      int
	TimeLimit time.Duration
	NoFresh   bool
	Refine    bool
	Outputs   outputs
}

func replanCommand() *cli.Command {
	return &cli.Command{
		Name:      "replan",
		Usage:     "a new schedule after the cluster changed, warm-started from the old one",
		UsageText: "tessel replan --schedule s.json --cluster new.json [--out new-s.json] [--json]",
		Description: "For a schedule file (with or without a cluster) and a new cluster — a link slowed down,\n" +
			"a device replaced — searches the schedule of the same placement, micro-batches and budget\n" +
			"on the new cluster, starting from the old schedule's per-device orders compacted under the\n" +
			"new times (one more seed beside the constructions and baselines of tessel search), and\n" +
			"reports its makespan and time beside a fresh search's (--no-fresh leaves that out).\n" +
			"A replan is meant to be quick: it leaves out the solver's re-optimisation of the\n" +
			"schedule's ends (the last step of tessel search) unless --refine.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "the old schedule `FILE`"},
			clusterFlags()[0], clusterFlags()[1], clusterFlags()[2], clusterFlags()[3],
			&cli.IntFlag{Name: "nr", Usage: "largest N_R tried (0: as many as the memory budget allows, at most 2·devices)"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop each search after this long and keep the best schedule found"},
			&cli.BoolFlag{Name: "no-fresh", Usage: "do not run a fresh search to compare with"},
			&cli.BoolFlag{Name: "refine", Usage: "let the solver re-optimise the ends of the new schedule too, as tessel search does (slower)"},
		}, outputFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("replan: unexpected argument %q", c.Args().First())
			}
			return runReplan(c.Context, replanOptions{
				Schedule: c.String("schedule"), Cluster: clusterSpecFrom(c), NR: c.Int("nr"), Seed: c.Int("seed"),
				TimeLimit: c.Duration("time-limit"), NoFresh: c.Bool("no-fresh"), Refine: c.Bool("refine"), Outputs: outputsFrom(c),
			}, c.App.Writer)
		},
	}
}

// replanReport is what tessel replan prints with --json.
type replanReport struct {
	Placement    string  `json:"placement"`
	Devices      int     `json:"devices"`
	MicroBatches int     `json:"micro_batches"`
	Memory       int     `json:"memory"`
	Budgets      []int   `json:"budgets,omitempty"`
	Old          int     `json:"old_makespan"`             // on its own cluster
	OldOrders    *int    `json:"old_orders_makespan"`      // its orders on the new cluster; null when they break a budget there
	Makespan     int     `json:"makespan"`                 // replanned
	Seconds      float64 `json:"seconds"`                  // of the replanning search
	Source       string  `json:"source"`                   // what built the replanned schedule
	Fresh        *int    `json:"fresh_makespan,omitempty"` // a fresh search's
	FreshSeconds float64 `json:"fresh_seconds,omitempty"`
	LowerBound   int     `json:"lower_bound"`
	Valid        bool    `json:"valid"`
}

func runReplan(ctx context.Context, opts replanOptions, stdout io.Writer) error {
	if opts.Schedule == "" {
		return usageErrorf("replan: --schedule FILE is required")
	}
	if err := checkAtLeast("nr", opts.NR, 0); err != nil {
		return err
	}
	if err := opts.Outputs.check(); err != nil {
		return err
	}
	old, err := loadVerified(opts.Schedule)
	if err != nil {
		return err
	}
	cl, err := opts.Cluster.cluster(old.Placement.Devices)
	if err != nil {
		return err
	}
	if cl == nil {
		return usageErrorf("replan: give the new cluster: --cluster FILE, or --device-speed and --transfer-time")
	}
	given := old.Placement
	if old.Cluster != nil {
		given = old.Source
	}
	p, err := cl.Apply(given)
	if err != nil {
		return &usageError{err}
	}
	rep := replanReport{Placement: p.Name, Devices: p.Devices, MicroBatches: old.MicroBatches, Memory: old.Memory, Old: schedule.Makespan(old)}
	if !p.Uniform(old.Memory) {
		rep.Budgets = p.Budgets(old.Memory)
	}
	search := func(start []completion.Start, refine bool) (*completion.Result, time.Duration, error) {
		ctx, cancel := withLimit(ctx, opts.TimeLimit)
		defer cancel()
		t0 := time.Now()
		effort := 0 // refine.DefaultEffort, as tessel search
		if !refine {
			effort = -1
		}
		res, err := completion.Search(ctx, p, completion.Options{
			Memory: old.Memory, MaxNR: opts.NR, MicroBatches: old.MicroBatches, Method: defaultMethod, Seed: opts.Seed, Start: start,
			RefineEffort: effort,
		})
		return res, time.Since(t0), err
	}
	t0 := time.Now()
	var start []completion.Start
	if seed, err := schedule.OnCluster(old, cl); err == nil {
		rep.OldOrders = ptr(schedule.Makespan(seed))
		seed.Cluster, seed.Source = nil, nil
		start = append(start, completion.Start{Name: "the old orders", Schedule: seed})
	}
	res, _, err := search(start, opts.Refine)
	took := time.Since(t0)
	if err != nil {
		return err
	}
	s := res.Schedule
	if err := schedule.Verify(s); err != nil {
		return fmt.Errorf("replan: the schedule fails verification (a bug): %w", err)
	}
	rep.Makespan, rep.Seconds, rep.Source, rep.LowerBound, rep.Valid = schedule.Makespan(s), secs(took), res.Source, res.Bounds.Makespan, true
	if !opts.NoFresh {
		fresh, t, err := search(nil, true)
		if err != nil {
			return err
		}
		rep.Fresh, rep.FreshSeconds = ptr(schedule.Makespan(fresh.Schedule)), secs(t)
	}
	if err := opts.Outputs.onCluster(cl, given).write(s); err != nil {
		return err
	}
	if opts.Outputs.JSON {
		return printJSON(stdout, rep)
	}
	fmt.Fprintf(stdout, "tessel replan: %s, %d devices, %d micro-batches, memory %s, on the new cluster\n\n", p.Name, p.Devices, old.MicroBatches, budgetOf(p, old.Memory))
	oldOrders := "they break a memory budget there"
	if rep.OldOrders != nil {
		oldOrders = fmt.Sprint(*rep.OldOrders)
	}
	fmt.Fprintf(stdout, "old schedule   makespan %d on its own cluster; its orders on the new one: %s\n", rep.Old, oldOrders)
	fmt.Fprintf(stdout, "replanned      makespan %d (lower bound %d) in %.3fs, built by %s\n", rep.Makespan, rep.LowerBound, rep.Seconds, rep.Source)
	if rep.Fresh != nil {
		fmt.Fprintf(stdout, "fresh search   makespan %d in %.3fs\n", *rep.Fresh, rep.FreshSeconds)
	}
	fmt.Fprintf(stdout, "verified       yes\n")
	return nil
}
