package main

import (
	"github.com/tessel-pp/tessel/solve"
	"github.com/urfave/cli/v2"
)

func optimalCommand() *cli.Command {
	return &cli.Command{
		Name:  "optimal",
		Usage: "search the time-optimal schedule of a few micro-batches (the paper's TO baseline)",
		UsageText: "tessel optimal --placement v-shape --devices 4 --micro-batches 6 --memory 16 [--forward-time 1 --backward-time 2]\n" +
			"   tessel optimal --placement-file my.json --micro-batches 4 --time-limit 60s --out s.json\n" +
			"   tessel optimal --placement-file my.json -n 16 -m 3 --offload --makespan 136 --cnf f.cnf   (then: cadical f.cnf > a.txt; the same flags with --answer a.txt)",
		Description: "Encodes every block of every micro-batch in Z3 and minimises the makespan by binary search\n" +
			"between a proven lower bound and the best of the constructions and baselines, so its answer is\n" +
			"never worse than theirs. Exact, but the time grows quickly with N: use tessel search for many\n" +
			"micro-batches. With --time-limit it returns the best schedule found,\n" +
			"marked as not proven. Every schedule printed or written has passed the verifier.\n\n" +
			"With --cnf FILE --makespan T it writes the problem as a time-indexed CNF formula (\"a schedule\n" +
			"that ends by T\") for any SAT solver, and with --answer FILE reads the solver's answer back: a\n" +
			"verified schedule, or no schedule ends by T (docs/commands.md, \"A SAT solver's answer\").",
		Flags: append(append(placementFlags(),
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N", Value: 4},
			&cli.IntFlag{Name: "memory", Aliases: []string{"m"}, Usage: "per-device memory budget (0: unlimited)"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop after this long and return the best schedule found (e.g. 60s, 5m)"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			coarsenFlag("optimal"),
			latencyBudgetFlag(),
			&cli.IntFlag{Name: "makespan", Usage: "with --cnf or --answer: the makespan the formula asks for (a schedule that ends by it)"},
			&cli.StringFlag{Name: "cnf", Usage: "write the problem at --makespan as a DIMACS CNF formula to `FILE` for a SAT solver, instead of solving it"},
			&cli.StringFlag{Name: "answer", Usage: "read a SAT solver's answer to the --cnf formula from `FILE`: its schedule (verified, written with --out), or that none ends by --makespan"},
			&cli.BoolFlag{Name: "link-order", Usage: "with --channels, the solver chooses the order of the transfers on each link instead of their producers' order; the schedule records it (\"link_order\")"},
		), append(savingsFlags(), outputFlags()...)...),
		Action: func(c *cli.Context) error {
			spec := placementSpecFrom(c)
			spec.Choose = true
			bar := newProgress(c.App.ErrWriter)
			defer bar.done()
			return solve.Optimal(c.Context, solve.OptimalOptions{
				Placement: spec, MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				TimeLimit: c.Duration("time-limit"), Seed: c.Int("seed"), Decisions: savingsFrom(c), Outputs: outputsFrom(c),
				Coarsen: c.Int("coarsen"),
				Latency: c.Int("latency-budget"), LinkOrder: c.Bool("link-order"), JSON: c.Bool("json"), Progress: bar.line,
				CNF: c.String("cnf"), Answer: c.String("answer"), Makespan: c.Int("makespan"),
			}, bar.clearing(c.App.Writer))
		},
	}
}
