// Package spec holds the problem value: what one search, construction,
// baseline, bound or solver call schedules. A Spec is the placement as
// timed on its cluster, the number of micro-batches, the memory and
// latency budgets, and which decisions about activations (offload,
// recompute) a schedule may take. Every layer above takes (ctx, spec,
// options); the options hold only effort, seeds, time and progress, so a
// problem is never spread over positional integers that can be swapped.
//
// A schedule carries the spec it was built for (schedule.Schedule embeds
// it), so that the verifier re-checks exactly the problem that was posed.
//
// A Spec is a small value: copy it to change one field (WithMicroBatches,
// Kept). It does not own its placement: the placement is shared, never
// modified.
package spec

import (
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
)

// Spec is one scheduling problem.
type Spec struct {
	// Placement is the placement as timed: with a cluster,
	// Cluster.Apply(Given) (block times on their devices, and its
	// placement.Timing: transfer times, capacities, links, host
	// channels); without one, the placement as given, its Timing zero.
	Placement *placement.Placement
	// Cluster, when set, is the cluster the schedule runs on and Given
	// the placement as the user wrote it: a schedule file records both,
	// so that the verifier re-checks with the same times. Both nil
	// without a cluster.
	Cluster *cluster.Cluster
	Given   *placement.Placement
	// MicroBatches is N, the number of micro-batches of the full
	// schedule (at least 1).
	MicroBatches int
	// Memory is the one per-device memory budget (0: unlimited); a
	// device's own budget is Budget.
	Memory int
	// Latency is the latency budget (placement's "Latency"): every
	// micro-batch's first block start to last block end at most
	// Latency; 0: none.
	Latency int
	// Allowed is which decisions about activations a schedule may take
	// where the placement allows them (placement's "Memory as a
	// decision"); none by default: every activation is kept.
	Allowed Decisions
	// Sharding, when set, shards stages over their data-parallel group
	// (FSDP; a schedule then carries its actions, Schedule.Shards).
	Sharding *Sharding
}

// Decisions says which decisions about a forward's activation a schedule
// may take besides keeping it.
type Decisions struct {
	Offload, Recompute bool
}

// Any reports whether some decision is allowed.
func (d Decisions) Any() bool { return d.Offload || d.Recompute }

// Allowing is the decisions a command's flags allow (placement.Decisions:
// --offload and --recompute; --offload-time declares, it allows nothing).
func Allowing(d placement.Decisions) Decisions {
	return Decisions{Offload: d.Offload, Recompute: d.Recompute}
}

// Permit reports whether a schedule that offloads and recomputes that
// many activations takes only decisions d allows.
func (d Decisions) Permit(offloads, recomputes int) bool {
	return (offloads == 0 || d.Offload) && (recomputes == 0 || d.Recompute)
}

// New is the spec of n micro-batches of placement p, with no budget, no
// latency budget and no decisions: set the fields for more.
func New(p *placement.Placement, microBatches int) Spec {
	return Spec{Placement: p, MicroBatches: microBatches}
}

// OnCluster is the spec of n micro-batches of the placement given on
// cluster c: its Placement is c.Apply(given), and Cluster and Given
// record both.
func OnCluster(c *cluster.Cluster, given *placement.Placement, microBatches int) (Spec, error) {
	p, err := c.Apply(given)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Placement: p, Cluster: c, Given: given, MicroBatches: microBatches}, nil
}

// Budget is device d's memory budget: the least of Memory and the
// device's capacity among those that are set (placement's Budget; 0:
// unlimited).
func (s Spec) Budget(d int) int { return s.Placement.Budget(d, s.Memory) }

// WithMicroBatches is s with n micro-batches.
func (s Spec) WithMicroBatches(n int) Spec {
	s.MicroBatches = n
	return s
}

// Check rejects a spec no schedule can be asked for: fewer than one
// micro-batch, an invalid placement, more micro-batches or block
// instances than tessel's limits (package limits), a decision the placement gives
// nothing to take, a latency budget below the critical path (an error
// that is ErrLatency). Its messages carry no package prefix: the caller
// adds its own.
func (s Spec) Check() error {
	if s.MicroBatches < 1 {
		return fmt.Errorf("%d micro-batches, want at least 1", s.MicroBatches)
	}
	if err := s.Placement.Validate(); err != nil {
		return err
	}
	if err := limits.CheckInstances(s.MicroBatches, len(s.Placement.Blocks)); err != nil {
		return err // a schedule of more instances than tessel's limit
	}
	if err := s.CheckDecisions(); err != nil {
		return err
	}
	return s.CheckLatency()
}

// CheckDecisions rejects decisions the placement gives nothing to take.
func (s Spec) CheckDecisions() error {
	p := s.Placement
	switch {
	case s.Allowed.Offload && !p.HasOffload():
		return fmt.Errorf("placement %q: offload asked for, but no block may be offloaded (no offload time: declare one, or give the devices host links for the activation sizes)", p.Name)
	case s.Allowed.Recompute && !p.HasRecompute():
		return fmt.Errorf("placement %q: recompute asked for, but no block may be recomputed", p.Name)
	}
	return nil
}

// CheckLatency rejects a latency budget that no schedule meets (below the
// critical path, or negative), as an error that is ErrLatency.
func (s Spec) CheckLatency() error {
	if err := s.Placement.CheckLatency(s.Latency); err != nil {
		return LatencyError(err)
	}
	return nil
}

// ErrLatency wraps the error of a latency budget no schedule meets.
var ErrLatency = errors.New("latency budget out of reach")

// latencyError is an error that is ErrLatency.
type latencyError struct{ error }

func (e latencyError) Is(target error) bool { return target == ErrLatency }
func (e latencyError) Unwrap() error        { return e.error }

// LatencyError is err marked as ErrLatency (errors.Is), its message
// unchanged.
func LatencyError(err error) error { return latencyError{err} }
