// Package study runs the comparing commands as library calls: tessel
// compare (Compare) and sweep (Sweep, with its latency sweep). Each checks
// its options (a refusal is bad input, package inputerr), runs package
// compare's study, writes the files asked for (package outfile) and prints
// its tables (package report).
package study

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// CompareOptions are the flags of tessel compare.
type CompareOptions struct {
	Placement    spec.Source
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
	// Progress, when set, takes a status line now and then.
	Progress report.Progress
	// MaskTimes prints every search time as compare.TimePlaceholder, so
	// that tests can compare whole outputs byte for byte.
	MaskTimes bool
}

// Compare is tessel compare: Tessel beside every baseline on one
// placement (or the paper's Table II), the charts and schedule files
// written where asked, the table printed in Format.
func Compare(ctx context.Context, opts CompareOptions, stdout io.Writer) error {
	if !slices.Contains(textfmt.Formats(), opts.Format) {
		return inputerr.Errorf("compare: unknown --format %q (want %s)", opts.Format, strings.Join(textfmt.Formats(), ", "))
	}
	progress := func(line string) { opts.Progress.Show("%s", line) }
	if opts.TableII {
		if opts.Placement.File != "" {
			return inputerr.Errorf("compare: --table-ii uses the built-in placements; drop --placement-file")
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
		return report.WriteTableII(stdout, t, opts.Format)
	}
	if err := inputerr.AtLeastAll([]inputerr.Bound{{Flag: "micro-batches", V: opts.MicroBatches, Min: 1}, {Flag: "memory", V: opts.Memory}, {Flag: "nr", V: opts.NR}, {Flag: "optimal-micro-batches", V: opts.OptimalN, Min: 1}, {Flag: "latency-budget", V: opts.Latency}}...); err != nil {
		return err
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
			return inputerr.Errorf("--tp-efficiency: %v", err)
		}
	}
	p, given, cl, err := opts.Placement.LoadOn()
	if err != nil {
		return inputerr.Wrap(err)
	}
	if inf != nil && !p.Inference() {
		return inputerr.Errorf("compare: --tp-efficiency adds the inference baselines: placement %q has backward blocks (use --infer)", p.Name)
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
	cmp.MaskTimes = opts.MaskTimes
	if err := writeCompareFiles(cmp, opts); err != nil {
		return err
	}
	return report.WriteComparison(stdout, cmp, opts.Format)
}

// writeCompareFiles writes what --svg, --html and --schedules ask for:
// every row's schedule, each already verified.
func writeCompareFiles(cmp *compare.Comparison, opts CompareOptions) error {
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
