package schedule

import (
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/spec"
)

// OnCluster is s run on cluster c: its placement as given (Given, or
// Placement without a cluster) on c, every device keeping its order of
// instances, each as early as that order and the dependency rule allow
// (Compact), with c recorded. The orders fix memory, so it fits c only if
// it fits every device's budget there: the result is verified, and an
// error says why not.
func OnCluster(s *Schedule, c *cluster.Cluster) (*Schedule, error) {
	given := s.Placement
	if s.Cluster != nil {
		given = s.Given
	}
	q, err := c.Apply(given)
	if err != nil {
		return nil, err
	}
	var out *Schedule
	if len(s.Decisions) > 0 {
		// Offloads and recomputes keep their orders too; the host links
		// of c may change the offload times.
		moved := &Schedule{Spec: spec.Spec{Placement: q, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: s.Instances, Decisions: s.Decisions}
		if out, err = decisionsUnchecked(moved); err != nil {
			return nil, err
		}
	} else {
		// Overlapped pairs stay pairs (none: Compact).
		ins, err := compact(q, s.MicroBatches, Orders(s), s.Pairs, nil)
		if err != nil {
			return nil, err
		}
		out = &Schedule{Spec: spec.Spec{Placement: q, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: ins, Pairs: s.Pairs}
	}
	if err := out.SetCluster(c, given); err != nil {
		return nil, err
	}
	if err := Verify(out); err != nil {
		return nil, fmt.Errorf("on the cluster: %w", err)
	}
	return out, nil
}
