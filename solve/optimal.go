package solve

import (
	"context"
	"io"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// OptimalOptions are the flags of tessel optimal.
type OptimalOptions struct {
	Placement    spec.Source
	MicroBatches int
	Memory       int
	TimeLimit    time.Duration
	Seed         int
	Decisions    placement.Decisions
	Latency      int
	Outputs      outfile.Schedule
	JSON         bool
	Coarsen      int  // --coarsen: 0 never, N blocks
	LinkOrder    bool // --link-order
	Progress     report.Progress
	// CNF, when set, is where to write the problem at Makespan as a
	// formula for a SAT solver, instead of solving it; Answer, when set,
	// is a SAT solver's answer to that formula, read back instead.
	CNF, Answer string
	Makespan    int
}

// Optimal is tessel optimal: the time-optimal schedule of a few
// micro-batches (or the best found in the time limit), verified, written
// and reported.
func Optimal(ctx context.Context, opts OptimalOptions, stdout io.Writer) error {
	if err := inputerr.AtLeastAll([]inputerr.Bound{{Flag: "micro-batches", V: opts.MicroBatches, Min: 1}, {Flag: "memory", V: opts.Memory}, {Flag: "latency-budget", V: opts.Latency}}...); err != nil {
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
		return inputerr.Errorf("optimal: the time-optimal search does not pair forwards and backwards (--overlap-time): run tessel search")
	}
	target, err := coarsenTarget(p, opts.Coarsen)
	if err != nil {
		return err
	}
	if opts.LinkOrder {
		switch {
		case !links.Queued(p):
			return inputerr.Errorf("optimal: --link-order needs links that carry one transfer at a time (--channels, or \"channels\": true in the cluster file)")
		case len(p.Lanes) > 0:
			return inputerr.Errorf("optimal: --link-order is not supported where device pairs have several links")
		case target > 0 && len(p.Blocks) > target:
			return inputerr.Errorf("optimal: --link-order does not combine with --coarsen")
		}
	}
	opts.Outputs.Cluster, opts.Outputs.Given = cl, given
	ctx, cancel := withLimit(ctx, opts.TimeLimit)
	defer cancel()
	t0 := time.Now()
	sp := spec.Spec{Placement: p, MicroBatches: opts.MicroBatches, Memory: opts.Memory, Latency: opts.Latency,
		Allowed: spec.Allowing(opts.Decisions)}
	if opts.CNF != "" || opts.Answer != "" {
		if opts.Coarsen > 0 || opts.LinkOrder {
			return inputerr.Errorf("optimal: --cnf and --answer do not combine with --coarsen or --link-order")
		}
		return satStep(ctx, sp, opts, stdout)
	}
	oopt := search.OptimalOptions{
		Seed: opts.Seed, LinkOrder: opts.LinkOrder,
		Progress: func(lo, hi int) {
			opts.Progress.Show("optimal: makespan between %d and %d (%s)", lo, hi, time.Since(t0).Round(time.Second))
		},
	}
	if target > 0 && len(p.Blocks) > target {
		cr, err := choose.Optimal(ctx, sp, choose.OptimalOptions{Search: oopt, Coarsen: target})
		if err != nil {
			return err
		}
		return answerTo{opts.Outputs, opts.JSON, stdout}.coarsened(cr.Schedule, report.NewCoarsenSummary(cr.Schedule, *cr.Coarsened, cr.Total), "optimal")
	}
	res, err := choose.OptimalDevices(ctx, sp, choose.OptimalOptions{Search: oopt})
	elapsed := time.Since(t0)
	if err != nil {
		return err
	}
	s := res.Schedule
	if err := opts.Outputs.WriteVerified("optimal", s); err != nil {
		return err
	}
	sum := report.OptimalSummary(res, elapsed, opts.Decisions.Any())
	if opts.JSON {
		return textfmt.JSON(stdout, sum)
	}
	return report.OptimalText(stdout, res, sum, report.TextOptions{Placement: p, Memory: opts.Memory, MicroBatches: opts.MicroBatches,
		Decisions: opts.Decisions.Any(), Units: 2 * report.TerminalUnits}, elapsed)
}
