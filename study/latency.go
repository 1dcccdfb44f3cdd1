package study

import (
	"context"
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/spec"
)

// LatencySweepOptions are sweep's --latency flags.
type LatencySweepOptions struct {
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

// parseList is compare.ParseList for --flag: an error is a usage error
// naming the flag.
func parseList(flag, s string, min int) ([]int, error) {
	xs, err := compare.ParseList(s, min)
	if err != nil {
		return nil, inputerr.Errorf("--%s: %v", flag, err)
	}
	return xs, nil
}

// latencySweep is tessel sweep --latency: compare.LatencySweep on one
// inference placement.
func latencySweep(ctx context.Context, opts SweepOptions, stdout io.Writer) error {
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
		return inputerr.Errorf("--tp-efficiency: %v", err)
	}
	spec := spec.Source{File: lo.File, Devices: opts.Devices, ForwardTime: opts.ForwardTime, BackwardTime: opts.BackwardTime, Inference: lo.Infer, Cluster: opts.Cluster}
	if lo.File == "" {
		if len(opts.Placements) != 1 {
			return inputerr.Errorf("sweep --latency: one placement (--placement NAME --infer, or --placement-file)")
		}
		spec.Name = opts.Placements[0]
	}
	p, err := spec.Load()
	if err != nil {
		return inputerr.Wrap(err)
	}
	if !p.Inference() {
		return inputerr.Errorf("sweep --latency: placement %q has backward blocks (use --infer, or an inference placement file)", p.Name)
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
	res, err := compare.LatencySweep(ctx, p, compare.LatencyOptions{MicroBatches: ns, Budgets: budgets, Inference: inf, Seed: opts.Seed,
		TimeLimit: opts.TimeLimit, Progress: func(done, total int) { opts.Progress.Show("sweep: %d of %d points", done, total) }})
	if err != nil {
		return err
	}
	if opts.OutDir == "" {
		return report.WriteLatencySweep(stdout, res, opts.Format)
	}
	files, err := report.LatencyFiles(res, opts.Format)
	if err != nil {
		return err
	}
	return writeFiles(opts.OutDir, opts.Force, files, stdout)
}
