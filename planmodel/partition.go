// Package planmodel takes a model file to a placement and a schedule, as
// the commands profile, partition and plan do: the model's layers
// measured into a model file (Profile), the split of least time per sample
// or of least latency (Partition, SampleLatency), on a cluster of mixed
// devices too, and the schedule of its placement beside the baselines and
// the recompute policy, or the DP × TP × PP layout (Plan). Each checks its
// options (a refusal is bad input, package inputerr), writes the files
// asked for (package outfile) and prints its report.
package planmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
)

// PartitionOptions are the flags of tessel partition (and the partition
// half of tessel plan).
type PartitionOptions struct {
	Model         string
	Devices       int      // 0: the model's
	CPUs          int      // -1: the model's
	Memory        *float64 // nil: the model's
	Order         string
	Chunks        int
	EmptyStages   bool
	NonContiguous bool
	IPTimeLimit   time.Duration
	Expert        string
	TimeUnit      float64
	MemoryUnit    float64
	Out           string // the placement file
	Force, JSON   bool
	// Capacities are the devices' memories in the model's unit (a
	// cluster's "memory_bytes"); nil: the model's cap on every device.
	Capacities []float64
	Format     string // partition only: text or megatron-layout
	// Cluster is a cluster file for the speed- and memory-aware split
	// (package hetero), "" for none; ClusterOut writes the cluster as
	// the split's placement runs on it.
	Cluster, ClusterOut string
	// Latency objective (partition only): --objective, --time-limit,
	// --subgraphs, --paper-memory, --comm-scale.
	Objective   string
	TimeLimit   time.Duration
	Subgraphs   int
	PaperMemory bool
	CommScale   float64
	// Stderr takes the warnings about the model (values that look like
	// another unit); nil: none are printed.
	Stderr io.Writer
	// Progress, when set, takes a status line now and then (the integer
	// programs' best and bound).
	Progress report.Progress
}

// model is the model file the flags name, its warnings printed on
// Stderr.
func (o PartitionOptions) model() partition.Model {
	m := partition.Model{Path: o.Model, Overrides: partition.Overrides{Devices: o.Devices, CPUs: o.CPUs, Memory: o.Memory}, Expert: o.Expert}
	if o.Stderr != nil {
		m.Warn = func(w string) { fmt.Fprintf(o.Stderr, "tessel: warning: %s: %s\n", o.Model, w) }
	}
	return m
}

// partitionError is err with package partition's input errors as usage
// errors.
func partitionError(err error) error {
	var in *partition.InputError
	if errors.As(err, &in) {
		return inputerr.Wrap(err)
	}
	return err
}

// runOptions are the options of partition.Run the flags give.
func (o PartitionOptions) runOptions() partition.Options {
	return partition.Options{Chunks: o.Chunks, Order: placement.Order(o.Order), EmptyStages: o.EmptyStages, NonContiguous: o.NonContiguous,
		IPTimeLimit: o.IPTimeLimit, TimeUnit: o.TimeUnit, MemoryUnit: o.MemoryUnit, Capacities: o.Capacities}
}

func (o PartitionOptions) check() error {
	if err := o.runOptions().Check(); err != nil {
		return inputerr.Wrap(err)
	}
	return outfile.Check(o.Force, o.Out, o.ClusterOut)
}

// partitionModel runs the partition the options ask for, with the
// baselines, and writes the placement it converts to where --out asks.
func partitionModel(ctx context.Context, o PartitionOptions) (*partition.Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	ropt := o.runOptions()
	ropt.IPProgress = func(best, lb float64) {
		o.Progress.Show("partition (IP): best %.4f, lower bound %.4f, %s", best, lb, time.Since(t0).Round(time.Second))
	}
	res, err := partition.RunModel(ctx, o.model(), ropt)
	if err != nil {
		return nil, partitionError(err)
	}
	res.Placement.File = o.Out
	if o.Out != "" {
		if err := outfile.WriteDrawn(o.Out, o.Force, res.Converted.Placement.Write); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Partition is tessel partition: the split the options ask for (on a
// cluster with Cluster), with its baselines, its placement written to Out,
// and its report on stdout (text, JSON or a Megatron-Core layout).
func Partition(ctx context.Context, o PartitionOptions, stdout io.Writer) error {
	switch {
	case o.Format != "" && o.Format != "text" && o.Format != "megatron-layout":
		return inputerr.Errorf("--format must be text or megatron-layout, got %q", o.Format)
	case o.Format == "megatron-layout" && o.JSON:
		return inputerr.Errorf("--json and --format megatron-layout do not go together")
	}
	if o.ClusterOut != "" && o.Cluster == "" {
		return inputerr.Errorf("--cluster-out needs --cluster")
	}
	if o.Cluster != "" {
		if o.Format == "megatron-layout" {
			return inputerr.Errorf("--cluster and --format megatron-layout do not go together")
		}
		if err := outfile.Check(o.Force, o.Out, o.ClusterOut); err != nil {
			return err
		}
		cl, err := cluster.Load(o.Cluster)
		if err != nil {
			return inputerr.Wrap(err)
		}
		r, err := onCluster(ctx, o, cl)
		if err != nil {
			return err
		}
		if o.JSON {
			return textfmt.JSON(stdout, r)
		}
		report.Hetero(stdout, r)
		return nil
	}
	res, err := partitionModel(ctx, o)
	if err != nil {
		return err
	}
	if o.Format == "megatron-layout" {
		ml, err := res.Megatron()
		if err != nil {
			return inputerr.Errorf("%s: no Megatron-Core layout: %v", o.Model, err)
		}
		report.MegatronArgs(stdout, ml)
		return nil
	}
	if o.JSON {
		return textfmt.JSON(stdout, res)
	}
	report.Partition(stdout, res)
	return nil
}

// SampleLatency is tessel partition --objective latency: the split of least
// single-sample latency (partition.RunSampleLatency) and Table 4's baselines.
func SampleLatency(ctx context.Context, o PartitionOptions, stdout io.Writer) error {
	t0 := time.Now()
	res, err := partition.RunModelSampleLatency(ctx, o.model(), partition.SampleLatencyRequest{PaperMemory: o.PaperMemory, CommScale: o.CommScale,
		NonContiguous: o.NonContiguous, Subgraphs: o.Subgraphs, TimeLimit: o.TimeLimit,
		Progress: func(best, lb float64) {
			o.Progress.Show("partition (latency IP): best %.4f, lower bound %.4f, %s", best, lb, time.Since(t0).Round(time.Second))
		}})
	if err != nil {
		return partitionError(err)
	}
	if o.JSON {
		return textfmt.JSON(stdout, res)
	}
	report.SampleLatency(stdout, res)
	return nil
}
