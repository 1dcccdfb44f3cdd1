package main

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
)

type sweepOptions struct {
	Placements   []string // built-in names
	Devices      int
	ForwardTime  int
	BackwardTime int
	NR           string // range of N_R of Fig. 11, "1-8"
	Memory       string // range of memory budgets of Fig. 12, "2-8"
	Fig12NR      int    // N_R of Fig. 12; 0: where Fig. 11 first reaches its least rate
	Jobs         int
	Seed         int
	TimeLimit    time.Duration // per point
	Format       string
	OutDir       string
	Force        bool
	Cluster      clusterSpec // every placement on it (its device count must be --devices)
	Decisions    placement.Decisions
	Latency      latencySweepOptions // --latency
}

const defaultSweepPlacements = "v-shape,x-shape,m-shape,nn-shape,k-shape"

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
			&cli.StringFlag{Name: "placement", Aliases: []string{"p"}, Usage: "comma-separated built-in placements", Value: defaultSweepPlacements},
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
			return runSweep(c.Context, sweepOptions{
				Placements: splitList(c.String("placement")), Devices: c.Int("devices"),
				ForwardTime: c.Int("forward-time"), BackwardTime: c.Int("backward-time"),
				NR: c.String("nr"), Memory: c.String("memory"), Fig12NR: c.Int("fig12-nr"),
				Jobs: c.Int("jobs"), Seed: c.Int("seed"), TimeLimit: c.Duration("time-limit"),
				Format: c.String("format"), OutDir: c.String("out-dir"), Force: c.Bool("force"),
				Cluster: clusterSpecFrom(c), Decisions: savingsFrom(c),
				Latency: latencySweepFrom(c),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runSweep(ctx context.Context, opts sweepOptions, stdout, stderr io.Writer) error {
	if !slices.Contains(textfmt.Formats(), opts.Format) {
		return usageErrorf("sweep: unknown --format %q (want %s)", opts.Format, strings.Join(textfmt.Formats(), ", "))
	}
	if opts.Latency.On {
		return runLatencySweep(ctx, opts, stdout, stderr)
	}
	if opts.Latency.Given != "" {
		return usageErrorf("sweep: --%s needs --latency", opts.Latency.Given)
	}
	latency := 0
	if opts.Latency.BudgetSet {
		v, err := strconv.Atoi(strings.TrimSpace(opts.Latency.Budgets))
		if err != nil || v < 0 {
			return usageErrorf("sweep: --latency-budget: want one number at least 0 without --latency, got %q", opts.Latency.Budgets)
		}
		latency = v
	}
	nrs, err := parseRange("nr", opts.NR, 1)
	if err != nil {
		return err
	}
	mems, err := parseRange("memory", opts.Memory, 1)
	if err != nil {
		return err
	}
	if err := inputerr.AtLeast("fig12-nr", opts.Fig12NR, 0); err != nil {
		return err
	}
	if err := inputerr.AtLeast("jobs", opts.Jobs, 0); err != nil {
		return err
	}
	if len(opts.Placements) == 0 {
		return usageErrorf("sweep: --placement names no placement")
	}
	var ps []*placement.Placement
	for _, name := range opts.Placements {
		spec := placementSpec{Name: name, Devices: opts.Devices, ForwardTime: opts.ForwardTime, BackwardTime: opts.BackwardTime, Cluster: opts.Cluster}
		p, _, _, err := spec.LoadFor(opts.Decisions)
		if err != nil {
			return inputerr.Wrap(err)
		}
		ps = append(ps, p)
	}
	if opts.OutDir != "" {
		if err := outfile.CheckDir(opts.OutDir, true); err != nil {
			return err
		}
		for _, f := range report.SweepFileNames(opts.Format) {
			if err := outfile.CheckNew(opts.Force, filepath.Join(opts.OutDir, f)); err != nil {
				return err
			}
		}
	}
	bar := newProgress(stderr)
	defer bar.done()
	out, err := compare.Sweep(ctx, ps, compare.SweepOptions{NRs: nrs, Memories: mems, Fig12NR: opts.Fig12NR, Jobs: opts.Jobs, Seed: opts.Seed,
		TimeLimit: opts.TimeLimit, Offload: opts.Decisions.Offload, Recompute: opts.Decisions.Recompute, Latency: latency, Progress: func(done, total int) { bar.show("sweep: %d of at most %d points", done, total) }})
	if err != nil {
		return err
	}
	bar.done()
	if opts.OutDir == "" {
		return report.WriteSweep(stdout, out, opts.Format)
	}
	files, err := report.SweepFiles(out, opts.Format)
	if err != nil {
		return err
	}
	return writeFiles(opts.OutDir, opts.Force, files, stdout)
}

// parseRange is compare.ParseRange for --flag: an error is a usage
// error naming the flag.
func parseRange(flag, s string, min int) ([]int, error) {
	xs, err := compare.ParseRange(s, min)
	if err != nil {
		return nil, usageErrorf("--%s: %v", flag, err)
	}
	return xs, nil
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
