package study

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/spec"
)

// SweepOptions are the flags of tessel sweep.
type SweepOptions struct {
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
	Cluster      spec.ClusterSource // every placement on it (its device count must be --devices)
	Decisions    placement.Decisions
	Latency      LatencySweepOptions // --latency
	Progress     report.Progress
}

// DefaultSweepPlacements are the placements Sweep takes by default.
const DefaultSweepPlacements = "v-shape,x-shape,m-shape,nn-shape,k-shape"

// Sweep is tessel sweep: the bubble rate against N_R and the memory
// budget (the paper's Fig. 11 and 12), or with Latency.On the throughput
// against the latency budget (Fig. 15); tables printed, or they and the
// charts written into OutDir.
func Sweep(ctx context.Context, opts SweepOptions, stdout io.Writer) error {
	if !slices.Contains(textfmt.Formats(), opts.Format) {
		return inputerr.Errorf("sweep: unknown --format %q (want %s)", opts.Format, strings.Join(textfmt.Formats(), ", "))
	}
	if opts.Latency.On {
		return latencySweep(ctx, opts, stdout)
	}
	if opts.Latency.Given != "" {
		return inputerr.Errorf("sweep: --%s needs --latency", opts.Latency.Given)
	}
	latency := 0
	if opts.Latency.BudgetSet {
		v, err := strconv.Atoi(strings.TrimSpace(opts.Latency.Budgets))
		if err != nil || v < 0 {
			return inputerr.Errorf("sweep: --latency-budget: want one number at least 0 without --latency, got %q", opts.Latency.Budgets)
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
		return inputerr.Errorf("sweep: --placement names no placement")
	}
	var ps []*placement.Placement
	for _, name := range opts.Placements {
		spec := spec.Source{Name: name, Devices: opts.Devices, ForwardTime: opts.ForwardTime, BackwardTime: opts.BackwardTime, Cluster: opts.Cluster}
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
	out, err := compare.Sweep(ctx, ps, compare.SweepOptions{NRs: nrs, Memories: mems, Fig12NR: opts.Fig12NR, Jobs: opts.Jobs, Seed: opts.Seed,
		TimeLimit: opts.TimeLimit, Offload: opts.Decisions.Offload, Recompute: opts.Decisions.Recompute, Latency: latency, Progress: func(done, total int) { opts.Progress.Show("sweep: %d of at most %d points", done, total) }})
	if err != nil {
		return err
	}
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
		return nil, inputerr.Errorf("--%s: %v", flag, err)
	}
	return xs, nil
}

// writeFiles writes files into dir (outfile.WriteDir), naming each on
// stdout.
func writeFiles(dir string, force bool, files []report.File, stdout io.Writer) error {
	out := make([]outfile.File, len(files))
	for k, f := range files {
		out[k] = outfile.File{Path: f.Name, Data: f.Data}
	}
	if err := outfile.WriteDir(dir, force, out); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, f.Name))
	}
	return nil
}
