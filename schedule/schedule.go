// Package schedule holds schedules of block instances: the type, its
// instances, decisions and pairs, metrics (makespan, bubble rate, peak
// memory, lower bounds), the steady state, the JSON file, and the
// violations the verifier names (VerifyError). The verifier itself is
// package verify, above the rules (package rule); the re-timing of
// per-device orders into start times is package compact.
//
// It never imports the solver: a schedule is checked from its start times
// alone, whoever produced it.
package schedule

import (
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// Instance is B_i^n started at Start: block index Block of micro-batch Micro.
type Instance struct {
	Block int
	Micro int
	Start int
}

// Ref names an instance without its start time.
type Ref struct {
	Block int
	Micro int
}

// Ref returns the instance's block and micro-batch.
func (in Instance) Ref() Ref { return Ref{in.Block, in.Micro} }

// Repetend describes how a schedule was built from a repetend (derived
// information, optional in files): iteration k runs B_i^{Offsets[i]+k} at
// Start + s_i + k·Period for k in 0..Iterations-1.
type Repetend struct {
	NR         int
	Period     int
	Offsets    []int // by block index
	Start      int   // start time of the first iteration (min over its instances)
	Iterations int
}

// Schedule is a start time for every block of every micro-batch of a
// placement, under a per-device memory budget (0 means unlimited): Memory,
// and each device's capacity where the placement has one (placement's
// Budget).
type Schedule struct {
	// Spec is the problem the schedule is for: its placement (as timed on
	// its cluster), micro-batches, memory budget and latency budget.
	// With a cluster, Cluster and Given are set and Placement is
	// Cluster.Apply(Given) (block times on their devices, transfer times,
	// capacities): the schedule file records both, so that verify.Schedule
	// re-checks with the same times (SetCluster). The latency budget
	// (placement's "Latency": every micro-batch's first block start to
	// last block end at most Latency; 0: none) is recorded in the file
	// too ("latency_budget"), so that verify.Schedule re-checks it.
	spec.Spec
	Instances []Instance
	// Decisions are the forward instances whose activation is offloaded
	// or recomputed (none: every activation is kept, as before).
	Decisions []Decision
	// Pairs are the overlapped forwards and backwards (placement's
	// Overlap; none: every instance runs alone, as before).
	Pairs    []Pair
	Repetend *Repetend // nil when not built from a repetend
	// LinkOrder, with channels, records the order of the transfers on
	// some links (placement's LinkOrder; the file's "link_order"). Links
	// it does not name, and every link when it is nil, queue their
	// transfers in the order their producers start (placement's
	// LinkQueue). verify.Schedule checks each named link lists exactly the
	// transfers that cross it, once each.
	LinkOrder []placement.LinkOrder
	// Shards are every device's FSDP actions in order, where the spec
	// shards stages (Spec.Sharding); nil otherwise.
	Shards [][]ShardOp
	// Claimed is what a schedule file said its metrics were (nil when
	// built in memory). It is never trusted: verify.Schedule compares it with
	// Measure, and Write writes measured metrics instead.
	Claimed *Claimed
	// Periodic, where set, is the schedule's instances as a head, a
	// period repeated and a tail (PeriodicForm; a periodic schedule
	// file). Instances may then be nil (not materialised: Materialize
	// builds them) or the form's, in its order. Measure, Write and
	// verify.Schedule work from the form, without the instances, where
	// the rules allow (PeriodicCheckable); where built instances are not
	// the form's (a copy changed: FormHolds), they alone count.
	Periodic *PeriodicForm
}

// Claimed is the metrics object of a schedule file.
type Claimed struct {
	Makespan   int
	BubbleRate float64
	PeakMemory []int
}

// SetCluster records that s runs on c, its placement being source on c:
// c.Apply(source) must equal s.Placement. A nil c removes the record. A
// source whose blocks give candidates is taken at the choice of the
// schedule's placement (placement.Choose of its Choice), so that the
// placement as given that a search chose devices for can be recorded.
func (s *Schedule) SetCluster(c *cluster.Cluster, source *placement.Placement) error {
	if c == nil {
		s.Cluster, s.Given = nil, nil
		return nil
	}
	if source.HasCandidates() && s.Placement != nil && s.Placement.HasCandidates() && len(source.Blocks) == len(s.Placement.Blocks) {
		chosen, err := placement.Choose(source.Reopen(), s.Placement.Choice())
		if err != nil {
			return err
		}
		source = chosen
	}
	q, err := c.Apply(source)
	if err != nil {
		return err
	}
	if !q.Equal(s.Placement) {
		return fmt.Errorf("placement %q on the cluster is not the schedule's placement", source.Name)
	}
	s.Cluster, s.Given = c, source
	return nil
}

// Budgets is every device's memory budget (placement's Budget under
// Memory; 0: unlimited).
func (s *Schedule) Budgets() []int { return s.Placement.Budgets(s.Memory) }
