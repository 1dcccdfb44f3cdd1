package planmodel

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
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
)

// onCluster is tessel partition --cluster (and the partition half
// of tessel plan --cluster): the split and device order of package hetero.
func onCluster(ctx context.Context, o PartitionOptions, cl *cluster.Cluster) (*hetero.Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	switch {
	case o.Chunks > 1:
		return nil, inputerr.Errorf("--cluster takes one stage per device: no --chunks")
	case o.NonContiguous:
		return nil, inputerr.Errorf("--cluster and --non-contiguous do not go together")
	case o.Expert != "":
		return nil, inputerr.Errorf("--cluster and --expert do not go together")
	}
	g, err := hetero.LoadModel(o.model(), cl, o.Cluster, "--cluster")
	if err != nil {
		return nil, inputerr.Wrap(err)
	}
	r, err := hetero.Run(ctx, g, cl, hetero.Options{TimeUnit: o.TimeUnit, MemoryUnit: o.MemoryUnit})
	switch {
	case errors.Is(err, hetero.ErrNoSplit):
		return nil, inputerr.Errorf("%s on %s: %v", o.Model, o.Cluster, err)
	case err != nil:
		return nil, inputerr.Errorf("%s: %v", o.Model, err)
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

// parallel is tessel plan --parallel auto.
func parallel(ctx context.Context, o PlanOptions, stdout io.Writer) error {
	po := o.Partition
	switch {
	case o.Parallel != "auto":
		return inputerr.Errorf("--parallel must be auto, got %q", o.Parallel)
	case o.Cluster == "":
		return inputerr.Errorf("--parallel auto needs --cluster")
	case o.Jobs < 0 || o.Effort < 0 || o.Top < 0 || o.DP < 0 || o.TP < 0 || o.PP < 0:
		return inputerr.Errorf("--jobs, --effort, --top, --dp, --tp and --pp must be at least 0")
	case po.NonContiguous || po.Expert != "" || po.Out != "" || o.Outputs.Out != "" || o.Budget != 0 || o.NR != 0 ||
		o.Decisions != (placement.Decisions{}) || o.TimeLimit != 0:
		return inputerr.Errorf("--parallel auto takes --cluster, --model, --micro-batches, --micro-batch-sizes, --chunks, --dp, --tp, --pp, --time-unit, --jobs, --effort, --top and --json only")
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
		return inputerr.Errorf("--micro-batch-sizes: %v", err)
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
	if o.JSON {
		return textfmt.JSON(stdout, res)
	}
	report.Hybrid(stdout, res, o.Top)
	return nil
}
