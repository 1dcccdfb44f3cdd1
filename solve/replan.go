package solve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/timeline"
	"github.com/tessel-pp/tessel/verify"
)

// ReplanOptions are the flags of tessel replan.
type ReplanOptions struct {
	Schedule  string
	Cluster   spec.ClusterSource
	NR        int
	Seed      int
	TimeLimit time.Duration
	Effort    int
	NoFresh   bool
	Refine    bool
	Timeline  string
	Model     string
	Outputs   outfile.Schedule
	JSON      bool
}

// Replan is tessel replan: the schedule of a file re-planned on a new
// cluster (or through a timeline of changes), beside a fresh search,
// written and reported.
func Replan(ctx context.Context, opts ReplanOptions, stdout io.Writer) error {
	if opts.Schedule == "" {
		return inputerr.Errorf("replan: --schedule FILE is required")
	}
	if err := inputerr.AtLeast("nr", opts.NR, 0); err != nil {
		return err
	}
	if err := opts.Outputs.Check(); err != nil {
		return err
	}
	old, err := verify.Load(opts.Schedule)
	if err != nil {
		return err
	}
	cl, err := opts.Cluster.Cluster(old.Placement.Devices)
	if err != nil {
		return inputerr.Wrap(err)
	}
	if opts.Timeline != "" {
		return replanTimeline(ctx, old, cl, opts, stdout)
	}
	if opts.Model != "" {
		return inputerr.Errorf("replan: --model goes with --timeline")
	}
	if cl == nil {
		return inputerr.Errorf("replan: give the new cluster: --cluster FILE, or --device-speed and --transfer-time")
	}
	given := old.Placement
	if old.Cluster != nil {
		given = old.Given
	}
	p, err := cl.Apply(given)
	if err != nil {
		return inputerr.Wrap(err)
	}
	t0 := time.Now()
	qctx, cancel := withLimit(ctx, opts.TimeLimit)
	ropt := search.ReplanOptions{MaxNR: opts.NR, Seed: opts.Seed, Effort: opts.Effort, Refine: opts.Refine}
	res, err := search.Replan(qctx, old, p, cl, ropt)
	cancel()
	took := time.Since(t0)
	if err != nil {
		return err
	}
	s := res.Schedule
	if err := verify.Schedule(s); err != nil {
		return fmt.Errorf("replan: the schedule fails verification (a bug): %w", err)
	}
	rep := report.NewReplanReport(old, p, res, took)
	if !opts.NoFresh {
		t1 := time.Now()
		fresh, err := choose.Fresh(ctx, p, old, ropt, opts.TimeLimit) // as tessel search
		if err != nil {
			return err
		}
		freshMakespan := schedule.Makespan(fresh.Schedule)
		rep.Fresh, rep.FreshSeconds = &freshMakespan, textfmt.Secs(time.Since(t1))
	}
	opts.Outputs.Cluster, opts.Outputs.Given = cl, given
	if err := opts.Outputs.Write(s); err != nil {
		return err
	}
	if opts.JSON {
		return textfmt.JSON(stdout, rep)
	}
	rep.WriteText(stdout, p)
	return nil
}

// replanTimeline is tessel replan --timeline: timeline.Run, printed.
func replanTimeline(ctx context.Context, old *schedule.Schedule, cl *cluster.Cluster, opts ReplanOptions, stdout io.Writer) error {
	t, err := timeline.Load(opts.Timeline)
	if err != nil {
		return inputerr.Wrap(err)
	}
	topt := timeline.Options{
		Replan: search.ReplanOptions{MaxNR: opts.NR, Seed: opts.Seed, Effort: opts.Effort, Refine: opts.Refine},
		Fresh:  !opts.NoFresh, TimeLimit: opts.TimeLimit,
	}
	if opts.Model != "" {
		if opts.Cluster.File == "" {
			return inputerr.Errorf("replan: --model needs --cluster FILE, the cluster the model was split onto (the timeline numbers its devices)")
		}
		g, err := partition.Load(opts.Model)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if g.IDs != nil {
			return inputerr.Errorf("%s: --model needs a layer profile, not a graph of Tarnawski et al.'s set", opts.Model)
		}
		topt.Model = g
	}
	rep, err := timeline.Run(ctx, old, t, cl, topt)
	if err != nil {
		var ce *timeline.ChangeError
		if errors.As(err, &ce) || errors.Is(err, timeline.ErrNotModelSplit) || errors.Is(err, hetero.ErrNoSplit) {
			return inputerr.Wrap(err)
		}
		return err
	}
	if err := opts.Outputs.Write(rep.Final); err != nil {
		return err
	}
	if opts.JSON {
		return textfmt.JSON(stdout, rep)
	}
	report.Timeline(stdout, rep)
	return nil
}
