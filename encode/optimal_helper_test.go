package encode

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// Optimal is the time-optimal (TO) schedule of n micro-batches under a
// per-device memory budget (0: unlimited), with the load cuts on: the
// encoder's whole problem, for the tests of this package. Library users
// call search.Optimal, which starts from the constructions and verifies.
func Optimal(ctx context.Context, p *placement.Placement, n, memory int, opt smt.Options) (*schedule.Schedule, *smt.Solution, error) {
	opt.LoadCuts = true
	refs := AllInstances(spec.New(p, n))
	sol, err := smt.MinimizeMakespan(ctx, InstanceProblem(spec.Spec{Placement: p, Memory: memory}, refs, nil), opt)
	if err != nil {
		return nil, nil, fmt.Errorf("placement %q, %d micro-batches, memory %d: %w", p.Name, n, memory, err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}}
	for k, r := range refs {
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: sol.Starts[k]})
	}
	return s, sol, nil
}
