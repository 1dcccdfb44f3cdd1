package solve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// SearchOptions are the flags of tessel search: the placement (a
// built-in or a file, on its cluster), the problem, the effort and the
// files to write.
type SearchOptions struct {
	Placement    spec.Source
	MicroBatches int
	Memory       int
	NR           int
	Method       string
	Jobs         int
	Seed         int
	Effort       int
	TimeLimit    time.Duration
	SolverOnly   bool
	Decisions    placement.Decisions
	Latency      int
	Objective    string
	Outputs      outfile.Schedule
	JSON         bool
	Coarsen      int // --coarsen: -1 auto, 0 never, N blocks
	Progress     report.Progress
}

// DefaultMethod is the faster method in the README's benchmark table.
const DefaultMethod = repetend.StrategyJoint

// searched finishes the search of tessel search (its res and err): a
// failure to find a repetend says which flags may help; the schedule, the
// answer at the placement's own times (package exact), is verified and
// written (writeVerified), and its summary made, with the decisions
// counted where the search could decide.
func searched(res *exact.Result, err error, opts SearchOptions, method repetend.Strategy) (report.Summary, error) {
	if errors.Is(err, search.ErrNoRepetend) {
		return report.Summary{}, fmt.Errorf("%w (raise --memory or --nr)", err)
	}
	if err != nil {
		return report.Summary{}, err
	}
	if err := opts.Outputs.WriteVerified("search", res.Schedule); err != nil {
		return report.Summary{}, err
	}
	sum := report.ExactSummary(res, method)
	if opts.Decisions.Any() {
		sum.WithDecisions(res.Schedule)
	}
	return sum, nil
}

// Search is tessel search: the schedule of least makespan found (never
// worse than the constructions and baselines), verified, written and
// reported.
func Search(ctx context.Context, opts SearchOptions, stdout io.Writer) error {
	if err := inputerr.AtLeastAll([]inputerr.Bound{{Flag: "micro-batches", V: opts.MicroBatches, Min: 1}, {Flag: "memory", V: opts.Memory}, {Flag: "nr", V: opts.NR}, {Flag: "jobs", V: opts.Jobs}, {Flag: "latency-budget", V: opts.Latency}}...); err != nil {
		return err
	}
	method, err := repetend.ParseStrategy(opts.Method)
	if err != nil {
		return inputerr.Errorf("search: %v", err)
	}
	if opts.Jobs > 0 && !method.Workers() {
		return inputerr.Errorf("search: --jobs sets the workers of the enumerate and race methods; method %s runs one solver (drop --jobs, or use --method enumerate)", method)
	}
	objective, err := choose.ParseObjective(opts.Objective)
	if err != nil {
		return inputerr.Errorf("search: --%v", err)
	}
	if err := opts.Outputs.Check(); err != nil {
		return err
	}
	p, given, cl, err := opts.Placement.LoadFor(opts.Decisions)
	if err != nil {
		return inputerr.Wrap(err)
	}
	target, err := coarsenTarget(p, opts.Coarsen)
	if err != nil {
		return err
	}
	opts.Outputs.Cluster, opts.Outputs.Given = cl, given
	ctx, cancel := withLimit(ctx, opts.TimeLimit)
	defer cancel()
	t0 := time.Now()
	sp := spec.Spec{Placement: p, MicroBatches: opts.MicroBatches, Memory: opts.Memory, Latency: opts.Latency,
		Allowed: spec.Allowing(opts.Decisions)}
	sopt := search.Options{
		MaxNR: opts.NR, Strategy: method, Jobs: opts.Jobs, Seed: opts.Seed, Effort: opts.Effort, SolverOnly: opts.SolverOnly, UseTime: opts.TimeLimit > 0, TimeLimit: opts.TimeLimit,
		Progress: func(pr search.Progress) { opts.Progress.Show("%s", pr.Status(time.Since(t0))) },
	}
	var res *exact.Result
	if p.HasCandidates() {
		// HEFT's assignment among the starts, and coarsening where asked.
		var cr *choose.Result
		if cr, err = choose.Run(ctx, sp, choose.Options{Search: sopt, Objective: objective, Coarsen: target}); err == nil {
			if cr.Coarsened != nil {
				return answerTo{opts.Outputs, opts.JSON, stdout}.coarsened(cr.Schedule, report.NewCoarsenSummary(cr.Schedule, *cr.Coarsened, cr.Total), "search")
			}
			res = &exact.Result{Search: cr.Result, Schedule: cr.Result.Schedule, Step: 1}
		}
	} else {
		// A placement in real units is searched on its coarse copy and
		// its schedule timed at its own steps (package exact).
		res, err = exact.Run(ctx, sp, sopt)
	}
	sum, err := searched(res, err, opts, method)
	if err != nil {
		return err
	}
	if opts.JSON {
		return textfmt.JSON(stdout, sum)
	}
	return report.SearchText(stdout, res.Search, sum, report.TextOptions{Placement: p, Memory: opts.Memory, NR: opts.NR, MicroBatches: opts.MicroBatches,
		Strategy: method, Decisions: opts.Decisions.Any(), Units: report.TerminalUnits, Answer: res.Schedule, Step: res.Step, Listed: res.Listed})
}
