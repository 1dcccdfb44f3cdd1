package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/solve"
)

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
			return solve.Replan(c.Context, solve.ReplanOptions{
				Schedule: c.String("schedule"), Cluster: clusterSpecFrom(c), NR: c.Int("nr"), Seed: c.Int("seed"),
				TimeLimit: c.Duration("time-limit"), Effort: c.Int("effort"), NoFresh: c.Bool("no-fresh"), Refine: c.Bool("refine"), Timeline: c.String("timeline"), Model: c.String("model"), Outputs: outputsFrom(c), JSON: c.Bool("json"),
			}, c.App.Writer)
		},
	}
}
