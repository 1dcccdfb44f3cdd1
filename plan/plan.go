// Package plan is tessel plan after the split: a model's split (package
// partition) turned into the schedule of its placement, on its cluster,
// under each device's memory left by the model, with the decisions
// allowed, searched on the placement's coarse copy and timed at its own
// steps (package exact), and reported in the model's time and memory
// (package report's Plan).
package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Options are what a plan asks beyond the split.
type Options struct {
	MicroBatches int
	// Budget is the search's per-device memory budget, in placement
	// memory units; 0: none.
	Budget int
	// Cluster is the cluster the split's placement runs on (device i:
	// stage i's device), nil for none; it must have a device per stage.
	Cluster *cluster.Cluster
	// Capacities are the devices' memories in the model's unit (a
	// cluster's "memory_bytes"); nil: the model's cap on every device.
	Capacities []float64
	// Decisions are declared on the placement on its cluster and allowed
	// to the search.
	Decisions placement.Decisions
	// Search is the search's effort (MaxNR, seeds, …); TimeLimit stops it,
	// which keeps the best schedule found (0: none).
	Search    search.Options
	TimeLimit time.Duration
}

// InputError is an error of what was asked rather than of the work: the
// placement does not fit its cluster (Cluster) or the decisions cannot be
// declared on it.
type InputError struct {
	Err     error
	Cluster bool
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Result is a plan: the split, the placement searched and its schedule.
type Result struct {
	Partition *partition.Report
	// Placement is the placement searched: the split's on its cluster,
	// with its capacities and decisions.
	Placement *placement.Placement
	// Cluster is Options.Cluster (nil: none).
	Cluster *cluster.Cluster
	// Memory is each device's memory under the model
	// (partition.Converted.Memory); nil without a memory model.
	Memory []partition.DeviceMemory
	// Search is the search (on the placement's coarse copy, package
	// exact) and its answer, Search.Schedule, timed on Placement and
	// verified there.
	Search *exact.Result
	// Strategy is the repetend search's; Budget and Decisions are what
	// the search was asked.
	Strategy   repetend.Strategy
	Budget     int
	Decisions  bool
	SearchTime time.Duration
}

// Run searches the schedule of pr's split: the split's placement on
// opt.Cluster, each device's budget what its stages leave of its memory (a
// profile in bytes), the decisions declared, then exact.Run for
// opt.MicroBatches under opt.Budget. The schedule is verified.
func Run(ctx context.Context, pr *partition.Report, opt Options) (*Result, error) {
	mem, err := pr.Converted.Memory(pr.Split, opt.Capacities)
	if err != nil {
		return nil, fmt.Errorf("plan: %s: %w", pr.Model, err)
	}
	given := pr.Converted.Placement
	if opt.Decisions != (placement.Decisions{}) {
		if given, err = placement.Declare(given, opt.Decisions); err != nil {
			return nil, &InputError{Err: err}
		}
	}
	p, cl := given, opt.Cluster
	switch {
	case cl != nil:
		if len(cl.Devices) != given.Devices {
			return nil, &InputError{Err: fmt.Errorf("cluster of %d devices for a placement of %d", len(cl.Devices), given.Devices), Cluster: true}
		}
		if mem != nil {
			// The cluster as the placement runs on it holds each
			// device's budget in placement units, so that a schedule
			// file records it.
			cl = cl.Clone()
			for d, m := range mem {
				cl.Devices[d].Memory = m.Budget
			}
		}
		if p, err = cl.Apply(given); err != nil {
			return nil, &InputError{Err: err, Cluster: true}
		}
	case mem != nil:
		p = given.Clone()
		p.Capacities = partition.Budgets(mem)
	}
	if opt.TimeLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.TimeLimit)
		defer cancel()
	}
	t0 := time.Now()
	sp := spec.Spec{Placement: p, MicroBatches: opt.MicroBatches, Memory: opt.Budget,
		Allowed: spec.Allowing(opt.Decisions)}
	if cl != nil {
		// The schedule records the cluster as the placement runs on it
		// (device i: stage i's device, each holding its budget).
		sp.Cluster, sp.Given = cl, given
	}
	so := opt.Search
	so.TimeLimit = opt.TimeLimit // named in the report of an answer it stopped
	res, err := exact.Run(ctx, sp, so)
	if err != nil {
		return nil, err
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		return nil, fmt.Errorf("plan: the schedule fails verification (a bug): %w", err)
	}
	strategy := opt.Search.Strategy
	if strategy == "" {
		strategy = repetend.StrategyJoint
	}
	return &Result{Partition: pr, Placement: p, Cluster: opt.Cluster, Memory: mem, Search: res, Strategy: strategy,
		Budget: opt.Budget, Decisions: opt.Decisions.Any(), SearchTime: time.Since(t0)}, nil
}

// BudgetCluster is the cluster as the placement runs on it, each
// device's memory its schedule budget in placement units (what its
// stages leave of its capacity): what tessel compare needs to run the
// baselines on the same budgets. nil without a cluster.
func (r *Result) BudgetCluster() *cluster.Cluster {
	if r.Cluster == nil {
		return nil
	}
	out := r.Cluster.Clone()
	for d := range out.Devices {
		if r.Memory != nil {
			out.Devices[d].Memory = r.Memory[d].Budget
		}
	}
	return out
}
