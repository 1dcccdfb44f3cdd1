package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/solve"
)

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
			&cli.StringFlag{Name: "method", Usage: "repetend search: joint, enumerate or race", Value: string(solve.DefaultMethod)},
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
			bar := newProgress(c.App.ErrWriter)
			defer bar.done()
			return solve.Search(c.Context, solve.SearchOptions{
				Objective: c.String("objective"),
				Placement: spec, MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				NR: c.Int("nr"), Method: c.String("method"), Jobs: c.Int("jobs"), Seed: c.Int("seed"), Effort: c.Int("effort"),
				TimeLimit: c.Duration("time-limit"), SolverOnly: c.Bool("solver-only"), Decisions: savingsFrom(c), Outputs: outputsFrom(c),
				Coarsen: c.Int("coarsen"),
				Latency: c.Int("latency-budget"), JSON: c.Bool("json"), Progress: bar.line,
			}, bar.clearing(c.App.Writer))
		},
	}
}
