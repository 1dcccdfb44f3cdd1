package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/hybrid"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
)

// partitionOnCluster is tessel partition --cluster (and the partition half
// of tessel plan --cluster): the split and device order of package hetero.
func partitionOnCluster(ctx context.Context, o partitionOptions, cl *cluster.Cluster) (*hetero.Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	switch {
	case o.Chunks > 1:
		return nil, usageErrorf("--cluster takes one stage per device: no --chunks")
	case o.NonContiguous:
		return nil, usageErrorf("--cluster and --non-contiguous do not go together")
	case o.Expert != "":
		return nil, usageErrorf("--cluster and --expert do not go together")
	}
	g, err := hetero.LoadModel(o.model(), cl, o.Cluster, "--cluster")
	if err != nil {
		return nil, inputerr.Wrap(err)
	}
	r, err := hetero.Run(ctx, g, cl, hetero.Options{TimeUnit: o.TimeUnit, MemoryUnit: o.MemoryUnit})
	switch {
	case errors.Is(err, hetero.ErrNoSplit):
		return nil, usageErrorf("%s on %s: %v", o.Model, o.Cluster, err)
	case err != nil:
		return nil, usageErrorf("%s: %v", o.Model, err)
	}
	// Both files are drawn before either is written.
	var files []outfile.File
	for _, f := range []struct {
		path string
		draw func(io.Writer) error
	}{{o.Out, r.Converted.Placement.Write}, {o.ClusterOut, r.Cluster.Write}} {
		if f.path == "" {
			continue
		}
		var buf bytes.Buffer
		if err := f.draw(&buf); err != nil {
			return nil, err
		}
		files = append(files, outfile.File{Path: f.path, Data: buf.Bytes()})
	}
	if err := outfile.WriteAll(o.Force, files); err != nil {
		return nil, err
	}
	return r, nil
}

// runHybrid is tessel plan --parallel auto.
func runHybrid(ctx context.Context, o planOptions, stdout io.Writer) error {
	po := o.Partition
	switch {
	case o.Parallel != "auto":
		return usageErrorf("--parallel must be auto, got %q", o.Parallel)
	case o.Cluster == "":
		return usageErrorf("--parallel auto needs --cluster")
	case o.Jobs < 0 || o.Effort < 0 || o.Top < 0 || o.DP < 0 || o.TP < 0 || o.PP < 0:
		return usageErrorf("--jobs, --effort, --top, --dp, --tp and --pp must be at least 0")
	case po.NonContiguous || po.Expert != "" || po.Out != "" || o.Outputs.Out != "" || o.Budget != 0 || o.NR != 0 ||
		o.Decisions != (placement.Decisions{}) || o.TimeLimit != 0:
		return usageErrorf("--parallel auto takes --cluster, --model, --micro-batches, --micro-batch-sizes, --chunks, --dp, --tp, --pp, --time-unit, --jobs, --effort, --top and --json only")
	}
	cl, err := cluster.Load(o.Cluster)
	if err != nil {
		return inputerr.Wrap(err)
	}
	g, err := hetero.LoadModel(po.model(), cl, o.Cluster, "--parallel auto")
	if err != nil {
		return inputerr.Wrap(err)
	}
	sizes, err := hybrid.ParseSizes(o.Sizes)
	if err != nil {
		return usageErrorf("--micro-batch-sizes: %v", err)
	}
	// --chunks C: every count of stages per device from 1 to C.
	opt := hybrid.Options{MicroBatches: o.MicroBatches, TimeUnit: po.TimeUnit, Effort: o.Effort, Jobs: o.Jobs, MicroBatchSizes: sizes,
		Chunks: hybrid.ChunksUpTo(po.Chunks), Degrees: hybrid.KeepDegrees(o.DP, o.TP, o.PP)}
	res, err := hybrid.Plan(ctx, g, cl, opt)
	if errors.Is(err, hybrid.ErrNoLayout) {
		return fmt.Errorf("%s on %s: %w", po.Model, o.Cluster, err)
	}
	if err != nil {
		return err
	}
	if o.Outputs.JSON {
		return printJSON(stdout, res)
	}
	res.WriteText(stdout, o.Top)
	return nil
}
