package main

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/study"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare Tessel with the baseline schedules (GPipe, 1F1B, Chimera-direct, 1F1B+, the zero-bubble family) on one placement",
		UsageText: "tessel compare --placement m-shape [--devices 4] [--memory 6] [--micro-batches 128] [--optimal] [--format table|csv|json|markdown]\n" +
			"   tessel compare --table-ii [--format markdown]",
		Description: "One row per method, each verified: the repetend bubble rate (as N grows, what the paper's\n" +
			"Table II reports), the makespan and bubble rate of N micro-batches, the peak memory per device,\n" +
			"whether the budget holds, and the search time. Every method runs on the placement given (its\n" +
			"stages, devices, times, memories and links; on chunks, 1F1B is interleaved 1F1B); × marks a\n" +
			"baseline with no straightforward adaptation; the zero-bubble family and PyTorch's schedules are\n" +
			"listed where they apply. Baselines do not adapt to the budget: a row says when one exceeds it,\n" +
			"and where none fits, what one micro-batch needs. --optimal adds the time-optimal search of\n" +
			"--optimal-micro-batches; --table-ii prints the paper's Table II (each baseline on its own\n" +
			"placement, bubble rates) with our figures beside the paper's (docs/commands.md#tessel-compare).",
		Flags: append(append(placementFlags(),
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N", Value: 128},
			&cli.IntFlag{Name: "memory", Aliases: []string{"m"}, Usage: "per-device memory budget (0: unlimited)"},
			&cli.IntFlag{Name: "nr", Usage: "largest N_R of the Tessel search (0: as many as the memory budget allows, at most 2·devices)"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop the Tessel search after this long and keep the best schedule found"},
			&cli.BoolFlag{Name: "optimal", Usage: "add the time-optimal search of a few micro-batches"},
			&cli.IntFlag{Name: "optimal-micro-batches", Usage: "micro-batches of the time-optimal search", Value: 4},
			&cli.DurationFlag{Name: "optimal-time-limit", Usage: "time limit of the time-optimal search", Value: time.Minute},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: " + strings.Join(textfmt.Formats(), ", "), Value: "table"},
			&cli.BoolFlag{Name: "table-ii", Usage: "print the paper's Table II, ours beside the paper's"},
			&cli.StringFlag{Name: "svg", Usage: "write the Gantt charts of every method's schedule, one under the other, to an SVG `FILE`"},
			&cli.StringFlag{Name: "html", Usage: "write a page with the table and every method's chart to an HTML `FILE`"},
			&cli.StringFlag{Name: "schedules", Usage: "write every method's schedule file into `DIR` (re-check with tessel verify)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite files that exist"},
			latencyBudgetFlag(),
			&cli.Float64Flag{Name: "tp-efficiency", Usage: "on an inference placement, add tensor parallelism over all devices and the 1F1B chain of its blocks; the share of the ideal speed-up tensor parallelism keeps per doubling of its devices, in (0, 1]"},
		), savingsFlags()...),
		Action: func(c *cli.Context) error {
			spec := placementSpecFrom(c)
			spec.Choose = true
			bar := newProgress(c.App.ErrWriter)
			defer bar.done()
			return study.Compare(c.Context, study.CompareOptions{
				Placement: spec, MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				NR: c.Int("nr"), Seed: c.Int("seed"), TimeLimit: c.Duration("time-limit"),
				Optimal: c.Bool("optimal"), OptimalN: c.Int("optimal-micro-batches"), OptimalLimit: c.Duration("optimal-time-limit"),
				Format: c.String("format"), TableII: c.Bool("table-ii"),
				SVG: c.String("svg"), HTML: c.String("html"), Schedules: c.String("schedules"), Force: c.Bool("force"),
				Decisions: savingsFrom(c), Latency: c.Int("latency-budget"), TPEfficiency: c.Float64("tp-efficiency"), Progress: bar.line,
			}, bar.clearing(c.App.Writer))
		},
	}
}
