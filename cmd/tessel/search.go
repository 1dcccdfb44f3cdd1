package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

type searchOptions struct {
	Placement    placementSpec
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
	Outputs      outputs
	Coarsen      int // --coarsen: -1 auto, 0 never, N blocks
}

// textUnits is the most time units a command draws in the terminal;
// tessel render draws more.
const textUnits = 48

// defaultMethod is the faster method in the README's benchmark table.
const defaultMethod = repetend.StrategyJoint

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:  "search",
		Usage: "find the shortest schedule of N micro-batches under a memory budget, never worse than the baselines (the Tessel search)",
		UsageText: "tessel search --placement m-shape --memory 6 --nr 6 --micro-batches 128\n" +
			"   tessel search --placement-file my.json --memory 8 --out s.json --svg s.svg",
		Description: "Finds the schedule of --micro-batches with the shortest makespan it can under the memory\n" +
			"budget, never one that ends later than a baseline or a solver-free construction:\n" +
			"  1. constructions (modulo and list schedules) and every baseline that applies;\n" +
			"  2. a repetend (every block once, block i from micro-batch offset n_i < N_R) of shorter period\n" +
			"     than the best modulo schedule's, searched with Z3 by --method: joint (default: offsets are\n" +
			"     solver variables), enumerate (offsets one by one on --jobs workers, the paper's Algorithm 1)\n" +
			"     or race (both, the first proven answer); --solver-only runs steps 2 and 3 alone;\n" +
			"  3. the repetend's time-optimal warmup and cooldown;\n" +
			"  4. Z3 re-optimises the ends, then windows anywhere, of the best schedule where not proven.\n" +
			"--time-limit uses the time given; it, Ctrl-C or a call that reaches --effort returns the best\n" +
			"verified schedule found, marked not proven (docs/commands.md#tessel-search, docs/anytime.md).",
		Flags: append(append(placementFlags(),
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N of the full schedule", Value: 128},
			&cli.IntFlag{Name: "memory", Aliases: []string{"m"}, Usage: "per-device memory budget (0: unlimited)"},
			&cli.IntFlag{Name: "nr", Usage: "largest N_R tried (0: as many as the memory budget allows, at most 2·devices)"},
			&cli.StringFlag{Name: "method", Usage: "repetend search: joint, enumerate or race", Value: string(defaultMethod)},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "solver workers of the enumerate and race methods (0: one per core); an error with joint, which runs one solver"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.IntFlag{Name: "effort", Usage: fmt.Sprintf("cap of one solver call of the repetend search, in Z3 resource units (0: %d, -1: none); deterministic, unlike --time-limit", repetend.DefaultEffort)},
			&cli.DurationFlag{Name: "time-limit", Usage: "keep improving the schedule for this long, then answer with the best found (e.g. 30s, 5m)"},
			&cli.BoolFlag{Name: "solver-only", Usage: "leave out the constructions and baselines: the paper's search alone (for measuring it)"},
			coarsenFlag("search"),
			latencyBudgetFlag(),
			&cli.StringFlag{Name: "objective", Usage: "what the choice of devices of blocks with candidates minimises: makespan (of N micro-batches) or period (the steady state's, throughput)", Value: "makespan"},
		), append(savingsFlags(), outputFlags()...)...),
		Action: func(c *cli.Context) error {
			spec := placementSpecFrom(c)
			spec.Choose = true
			return runSearch(c.Context, searchOptions{
				Objective: c.String("objective"),
				Placement: spec, MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				NR: c.Int("nr"), Method: c.String("method"), Jobs: c.Int("jobs"), Seed: c.Int("seed"), Effort: c.Int("effort"),
				TimeLimit: c.Duration("time-limit"), SolverOnly: c.Bool("solver-only"), Decisions: savingsFrom(c), Outputs: outputsFrom(c),
				Coarsen: c.Int("coarsen"),
				Latency: c.Int("latency-budget"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// searched finishes the search of tessel search (its res and err): a
// failure to find a repetend says which flags may help; the schedule, the
// answer at the placement's own times (package exact), is verified and
// written (writeVerified), and its summary made, with the decisions
// counted where the search could decide.
func searched(res *exact.Result, err error, opts searchOptions, method repetend.Strategy) (report.Summary, error) {
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

func runSearch(ctx context.Context, opts searchOptions, stdout, stderr io.Writer) error {
	for _, f := range []struct {
		name   string
		v, min int
	}{{"micro-batches", opts.MicroBatches, 1}, {"memory", opts.Memory, 0}, {"nr", opts.NR, 0}, {"jobs", opts.Jobs, 0}, {"latency-budget", opts.Latency, 0}} {
		if err := inputerr.AtLeast(f.name, f.v, f.min); err != nil {
			return err
		}
	}
	method, err := repetend.ParseStrategy(opts.Method)
	if err != nil {
		return usageErrorf("search: %v", err)
	}
	if opts.Jobs > 0 && !method.Workers() {
		return usageErrorf("search: --jobs sets the workers of the enumerate and race methods; method %s runs one solver (drop --jobs, or use --method enumerate)", method)
	}
	objective, err := choose.ParseObjective(opts.Objective)
	if err != nil {
		return usageErrorf("search: --%v", err)
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
	bar := newProgress(stderr)
	t0 := time.Now()
	sp := spec.Spec{Placement: p, MicroBatches: opts.MicroBatches, Memory: opts.Memory, Latency: opts.Latency,
		Allowed: spec.Decisions{Offload: opts.Decisions.Offload, Recompute: opts.Decisions.Recompute}}
	sopt := search.Options{
		MaxNR: opts.NR, Strategy: method, Jobs: opts.Jobs, Seed: opts.Seed, Effort: opts.Effort, SolverOnly: opts.SolverOnly, UseTime: opts.TimeLimit > 0, TimeLimit: opts.TimeLimit,
		Progress: func(pr search.Progress) { bar.show("%s", pr.Status(time.Since(t0))) },
	}
	var res *exact.Result
	if p.HasCandidates() {
		// HEFT's assignment among the starts, and coarsening where asked.
		var cr *choose.Result
		if cr, err = choose.Run(ctx, sp, choose.Options{Search: sopt, Objective: objective, Coarsen: target}); err == nil {
			if cr.Coarsened != nil {
				bar.done()
				return writeCoarsened(cr.Schedule, report.NewCoarsenSummary(cr.Schedule, *cr.Coarsened, cr.Total), "search", opts.Outputs, stdout)
			}
			res = &exact.Result{Search: cr.Result, Schedule: cr.Result.Schedule, Step: 1}
		}
	} else {
		// A placement in real units is searched on its coarse copy and
		// its schedule timed at its own steps (package exact).
		res, err = exact.Run(ctx, sp, sopt)
	}
	bar.done()
	sum, err := searched(res, err, opts, method)
	if err != nil {
		return err
	}
	if opts.Outputs.JSON {
		return printJSON(stdout, sum)
	}
	return report.SearchText(stdout, res.Search, sum, report.TextOptions{Placement: p, Memory: opts.Memory, NR: opts.NR, MicroBatches: opts.MicroBatches,
		Strategy: method, Decisions: opts.Decisions.Any(), Units: textUnits, Answer: res.Schedule, Step: res.Step, Listed: res.Listed})
}
