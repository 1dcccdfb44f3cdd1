package compact

import (
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// OnCluster is s run on cluster c: its placement as given (Given, or
// Placement without a cluster) on c, every device keeping its order of
// instances, each as early as that order and the dependency rule allow
// (Compact), with c recorded. The orders fix memory, so it fits c only if
// it fits every device's budget there: the result is verified, and an
// error says why not.
func OnCluster(s *schedule.Schedule, c *cluster.Cluster) (*schedule.Schedule, error) {
	given := s.Placement
	if s.Cluster != nil {
		given = s.Given
	}
	q, err := c.Apply(given)
	if err != nil {
		return nil, err
	}
	// Every order kept (retime); the host links of c may change the
	// offload times.
	out, err := retime(s, q)
	if err != nil {
		return nil, err
	}
	if err := out.SetCluster(c, given); err != nil {
		return nil, err
	}
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("on the cluster: %w", err)
	}
	return out, nil
}
