package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
)

type compareOptions struct {
	Placement    placementSpec
	MicroBatches int
	Memory       int
	NR           int
	Seed         int
	TimeLimit    time.Duration // of the Tessel search
	Optimal      bool
	OptimalN     int
	OptimalLimit time.Duration
	Format       string
	TableII      bool
	SVG, HTML    string // charts of every row's schedule
	Schedules    string // directory for every row's schedule file
	Force        bool
	Decisions    placement.Decisions
	Latency      int
	TPEfficiency float64 // 0: no inference baselines beside GPipe
	// fixedTimes prints every search time as compare.TimePlaceholder, so
	// that tests can compare whole outputs byte for byte.
	fixedTimes bool
}

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
			return runCompare(c.Context, compareOptions{
				Placement: spec, MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				NR: c.Int("nr"), Seed: c.Int("seed"), TimeLimit: c.Duration("time-limit"),
				Optimal: c.Bool("optimal"), OptimalN: c.Int("optimal-micro-batches"), OptimalLimit: c.Duration("optimal-time-limit"),
				Format: c.String("format"), TableII: c.Bool("table-ii"),
				SVG: c.String("svg"), HTML: c.String("html"), Schedules: c.String("schedules"), Force: c.Bool("force"),
				Decisions: savingsFrom(c), Latency: c.Int("latency-budget"), TPEfficiency: c.Float64("tp-efficiency"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runCompare(ctx context.Context, opts compareOptions, stdout, stderr io.Writer) error {
	if !slices.Contains(textfmt.Formats(), opts.Format) {
		return usageErrorf("compare: unknown --format %q (want %s)", opts.Format, strings.Join(textfmt.Formats(), ", "))
	}
	bar := newProgress(stderr)
	defer bar.done()
	progress := func(line string) { bar.show("%s", line) }
	if opts.TableII {
		if opts.Placement.File != "" {
			return usageErrorf("compare: --table-ii uses the built-in placements; drop --placement-file")
		}
		t, err := compare.TableII(ctx, compare.TableIIOptions{Devices: opts.Placement.Devices, Seed: opts.Seed, Progress: progress,
			Load: func(name string) (*placement.Placement, error) {
				spec := opts.Placement
				spec.Name = name
				p, err := spec.Load()
				return p, inputerr.Wrap(err)
			}})
		if err != nil {
			return err
		}
		bar.done()
		return report.WriteTableII(stdout, t, opts.Format)
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"micro-batches", opts.MicroBatches, 1}, {"memory", opts.Memory, 0}, {"nr", opts.NR, 0}, {"optimal-micro-batches", opts.OptimalN, 1}, {"latency-budget", opts.Latency, 0}} {
		if err := inputerr.AtLeast(f.name, f.v, f.min); err != nil {
			return err
		}
	}
	if err := (outfile.Schedule{SVG: opts.SVG, HTML: opts.HTML, Force: opts.Force}).Check(); err != nil {
		return err
	}
	if opts.Schedules != "" {
		if err := outfile.CheckDir(opts.Schedules, true); err != nil {
			return err
		}
	}
	var inf *inference.Options
	if opts.TPEfficiency != 0 {
		inf = &inference.Options{Efficiency: opts.TPEfficiency}
		if err := inf.Check(); err != nil {
			return usageErrorf("--tp-efficiency: %v", err)
		}
	}
	p, given, cl, err := opts.Placement.LoadOn()
	if err != nil {
		return inputerr.Wrap(err)
	}
	if inf != nil && !p.Inference() {
		return usageErrorf("compare: --tp-efficiency adds the inference baselines: placement %q has backward blocks (use --infer)", p.Name)
	}
	if opts.Decisions != (placement.Decisions{}) {
		if p, given, err = opts.Placement.LoadDeclared(opts.Decisions); err != nil {
			return inputerr.Wrap(err)
		}
	}
	cmp, err := compare.Run(ctx, p, compare.Options{
		MicroBatches: opts.MicroBatches, Memory: opts.Memory, MaxNR: opts.NR, Seed: opts.Seed, TimeLimit: opts.TimeLimit,
		Optimal: opts.Optimal, OptimalMicroBatches: opts.OptimalN, OptimalTimeLimit: opts.OptimalLimit,
		Cluster: cl, Given: given, Progress: progress,
		Offload: opts.Decisions.Offload, Recompute: opts.Decisions.Recompute, Latency: opts.Latency, Inference: inf,
	})
	if err != nil {
		return err
	}
	cmp.MaskTimes = opts.fixedTimes
	bar.done()
	if err := writeCompareFiles(cmp, opts); err != nil {
		return err
	}
	return report.WriteComparison(stdout, cmp, opts.Format)
}

// writeCompareFiles writes what --svg, --html and --schedules ask for:
// every row's schedule, each already verified.
func writeCompareFiles(cmp *compare.Comparison, opts compareOptions) error {
	charts, err := report.ComparisonCharts(cmp)
	if err != nil {
		return err
	}
	// Everything is drawn before anything is written; the schedules are
	// written all or nothing.
	var bundle []outfile.File
	if opts.Schedules != "" {
		for _, ch := range charts {
			data, err := outfile.Drawn(ch.Schedule, (*schedule.Schedule).Write)
			if err != nil {
				return err
			}
			bundle = append(bundle, outfile.File{Path: ch.Slug + ".json", Data: data})
		}
	}
	var files []outfile.File
	if opts.SVG != "" {
		files = append(files, outfile.File{Path: opts.SVG, Data: report.StackedSVG(charts)})
	}
	if opts.HTML != "" {
		files = append(files, outfile.File{Path: opts.HTML, Data: report.ComparisonHTML(cmp, charts)})
	}
	if opts.Schedules != "" {
		if err := outfile.WriteDir(opts.Schedules, opts.Force, bundle); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	if err := outfile.WriteAll(opts.Force, files); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}
