package main

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/study"
)

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:  "sweep",
		Usage: "bubble rate against N_R and the memory budget (the paper's Fig. 11 and 12), or throughput against the latency budget (--latency, Fig. 15)",
		UsageText: "tessel sweep [--placement v-shape,x-shape,m-shape,nn-shape,k-shape] [--nr 1-8] [--memory 2-8] [--format table|csv|json|markdown]\n" +
			"   tessel sweep --out-dir docs/img   (fig11.svg, fig12.svg and the tables)",
		Description: "Fig. 11: for every N_R in --nr, the repetend bubble rate of the best repetend with at most\n" +
			"N_R micro-batches, memory unlimited.\n" +
			"Fig. 12: for every budget M in --memory, the same with N_R fixed (--fig12-nr, or per placement\n" +
			"the smallest N_R at which Fig. 11 reaches its least rate) and memory at most M.\n" +
			"Every point is a repetend of least period whose warmup and cooldown exist under the budget;\n" +
			"\"none\" means no repetend fits. A point stopped by --time-limit is marked *: its rate is an upper\n" +
			"bound, the better of what it found and of the point before it (whose repetend fits it too).\n" +
			"With --out-dir the tables and SVG line charts (one line per placement) go to files.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "placement", Aliases: []string{"p"}, Usage: "comma-separated built-in placements", Value: study.DefaultSweepPlacements},
			&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "number of devices D", Value: 4},
			&cli.IntFlag{Name: "forward-time", Usage: "time of a forward block", Value: 1},
			&cli.IntFlag{Name: "backward-time", Usage: "time of a backward block", Value: 3},
			&cli.StringFlag{Name: "nr", Usage: "range of N_R of Fig. 11 (`A-B`, or one number)", Value: "1-8"},
			&cli.StringFlag{Name: "memory", Aliases: []string{"m"}, Usage: "range of memory budgets of Fig. 12 (`A-B`, or one number)", Value: "2-8"},
			&cli.IntFlag{Name: "fig12-nr", Usage: "N_R of Fig. 12 for every placement (0: where Fig. 11 reaches its least rate)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "points searched at once (0: one per core)"},
			clusterFlag("cluster"), clusterFlag("device-speed"), clusterFlag("transfer-time"), clusterFlag("channels"),
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.DurationFlag{Name: "time-limit", Usage: "time limit of each point (0: none); a few points at tight budgets take many minutes", Value: 2 * time.Minute},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "table format: " + strings.Join(textfmt.Formats(), ", "), Value: "table"},
			&cli.StringFlag{Name: "out-dir", Usage: "write fig11.svg, fig12.svg and the tables into `DIR`"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite files in --out-dir"},
			savingsFlags()[0], savingsFlags()[1], savingsFlags()[2],
			&cli.BoolFlag{Name: "latency", Usage: "instead of Fig. 11 and 12: throughput and latency of an inference placement under latency budgets, beside tensor parallelism, 1F1B and GPipe (Fig. 15)"},
			&cli.StringFlag{Name: "placement-file", Usage: "with --latency: the inference placement in a JSON `FILE`"},
			&cli.BoolFlag{Name: "infer", Usage: "with --latency: the inference variant of the built-in --placement"},
			&cli.StringFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "with --latency: the N measured, `LIST` (1,2,4 or A-B)", Value: "8"},
			&cli.StringFlag{Name: "latency-budget", Usage: "with --latency: the latency budgets of the Tessel search, `LIST` (a,b,c or A-B or A-B/STEP; 0: none); without it: one budget every repetend's steady state meets", Value: "0"},
			&cli.Float64Flag{Name: "tp-efficiency", Usage: "with --latency: share of the ideal speed-up tensor parallelism keeps per doubling of its devices, in (0, 1]", Value: 1},
		},
		Action: func(c *cli.Context) error {
			bar := newProgress(c.App.ErrWriter)
			defer bar.done()
			return study.Sweep(c.Context, study.SweepOptions{
				Placements: splitList(c.String("placement")), Devices: c.Int("devices"),
				ForwardTime: c.Int("forward-time"), BackwardTime: c.Int("backward-time"),
				NR: c.String("nr"), Memory: c.String("memory"), Fig12NR: c.Int("fig12-nr"),
				Jobs: c.Int("jobs"), Seed: c.Int("seed"), TimeLimit: c.Duration("time-limit"),
				Format: c.String("format"), OutDir: c.String("out-dir"), Force: c.Bool("force"),
				Cluster: clusterSpecFrom(c), Decisions: savingsFrom(c),
				Latency: latencySweepFrom(c), Progress: bar.line,
			}, bar.clearing(c.App.Writer))
		},
	}
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
