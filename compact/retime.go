package compact

import (
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Retime is s on placement q, the same blocks and dependencies as s's
// placement at other times (the placement a coarse copy was made from,
// or another cluster's): every device keeps its order of instances, every
// offload, reload and recompute its order (compact.Compact with Keep.From), every
// overlapped pair stays a pair, and everything starts as early as those
// orders and q's times allow. The result is verified; where it breaks a
// rule that times can break (a latency budget), the error says so.
func Retime(s *schedule.Schedule, q *placement.Placement) (*schedule.Schedule, error) {
	if len(q.Blocks) != len(s.Placement.Blocks) || len(q.Deps) != len(s.Placement.Deps) {
		return nil, fmt.Errorf("retime: placement %q is not the schedule's at other times", q.Name)
	}
	for i, b := range q.Blocks {
		if b.ID != s.Placement.Blocks[i].ID || b.Memory != s.Placement.Blocks[i].Memory {
			return nil, fmt.Errorf("retime: placement %q is not the schedule's at other times (block %q)", q.Name, b.ID)
		}
	}
	out, err := retime(s, q)
	if err != nil {
		return nil, err
	}
	out.Latency = s.Latency
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("retime: %w", err)
	}
	return out, nil
}

// retime is Retime without the checks: s's orders and decisions on q.
func retime(s *schedule.Schedule, q *placement.Placement) (*schedule.Schedule, error) {
	if len(s.Decisions) > 0 {
		// Offloads and recomputes keep their orders too; q's host links
		// may change the offload times.
		moved := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: s.Instances, Decisions: s.Decisions}
		return decisionsUnchecked(moved)
	}
	// Overlapped pairs stay pairs (none: Compact).
	ins, err := orders(spec.New(q, s.MicroBatches), Keep{Orders: schedule.Orders(s), Pairs: s.Pairs})
	if err != nil {
		return nil, err
	}
	return &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: ins, Pairs: s.Pairs}, nil
}
