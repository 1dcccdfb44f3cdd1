package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/report"
)

// latencyBudgetFlag is --latency-budget of search, optimal, compare and
// sweep (placement's "Latency").
func latencyBudgetFlag() cli.Flag {
	return &cli.IntFlag{Name: "latency-budget", Usage: "every micro-batch's latency (its first block's start to its last block's end) at most this; 0: none"}
}

// latencySweepOptions are sweep's --latency flags.
type latencySweepOptions struct {
	On           bool
	File         string
	Infer        bool
	MicroBatches string
	Budgets      string
	Efficiency   float64
	// Given names a --latency flag given without --latency.
	Given string
	// BudgetSet: --latency-budget was given (without --latency, one
	// budget of the Fig. 11 and 12 repetends).
	BudgetSet bool
}

func latencySweepFrom(c *cli.Context) latencySweepOptions {
	o := latencySweepOptions{On: c.Bool("latency"), File: c.String("placement-file"), Infer: c.Bool("infer"),
		MicroBatches: c.String("micro-batches"), Budgets: c.String("latency-budget"), Efficiency: c.Float64("tp-efficiency")}
	o.BudgetSet = c.IsSet("latency-budget")
	for _, f := range []string{"placement-file", "infer", "micro-batches", "tp-efficiency"} {
		if c.IsSet(f) && o.Given == "" {
			o.Given = f
		}
	}
	return o
}

// parseList is compare.ParseList for --flag: an error is a usage error
// naming the flag.
func parseList(flag, s string, min int) ([]int, error) {
	xs, err := compare.ParseList(s, min)
	if err != nil {
		return nil, usageErrorf("--%s: %v", flag, err)
	}
	return xs, nil
}

// runLatencySweep is tessel sweep --latency: compare.LatencySweep on one
// inference placement.
func runLatencySweep(ctx context.Context, opts sweepOptions, stdout, stderr io.Writer) error {
	lo := opts.Latency
	ns, err := parseList("micro-batches", lo.MicroBatches, 1)
	if err != nil {
		return err
	}
	budgets, err := parseList("latency-budget", lo.Budgets, 0)
	if err != nil {
		return err
	}
	inf := inference.Options{Efficiency: lo.Efficiency}
	if err := inf.Check(); err != nil {
		return usageErrorf("--tp-efficiency: %v", err)
	}
	spec := placementSpec{File: lo.File, Devices: opts.Devices, ForwardTime: opts.ForwardTime, BackwardTime: opts.BackwardTime, Inference: lo.Infer, Cluster: opts.Cluster}
	if lo.File == "" {
		if len(opts.Placements) != 1 {
			return usageErrorf("sweep --latency: one placement (--placement NAME --infer, or --placement-file)")
		}
		spec.Name = opts.Placements[0]
	}
	p, err := spec.Load()
	if err != nil {
		return inputerr.Wrap(err)
	}
	if !p.Inference() {
		return usageErrorf("sweep --latency: placement %q has backward blocks (use --infer, or an inference placement file)", p.Name)
	}
	for _, b := range budgets {
		if err := p.CheckLatency(b); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	if opts.OutDir != "" {
		if err := outfile.CheckDir(opts.OutDir, true); err != nil {
			return err
		}
	}
	bar := newProgress(stderr)
	defer bar.done()
	res, err := compare.LatencySweep(ctx, p, compare.LatencyOptions{MicroBatches: ns, Budgets: budgets, Inference: inf, Seed: opts.Seed,
		TimeLimit: opts.TimeLimit, Progress: func(done, total int) { bar.show("sweep: %d of %d points", done, total) }})
	if err != nil {
		return err
	}
	bar.done()
	if opts.OutDir == "" {
		return report.WriteLatencySweep(stdout, res, opts.Format)
	}
	files, err := report.LatencyFiles(res, opts.Format)
	if err != nil {
		return err
	}
	return writeFiles(opts.OutDir, opts.Force, files, stdout)
}
