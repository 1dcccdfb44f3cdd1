package search

import (
	"fmt"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// OneMicroBatch schedules one micro-batch with a list schedule (every
// block as soon as its inputs and devices are ready): the picture of a
// placement, its independent branches side by side. The schedule is
// verified.
func OneMicroBatch(p *placement.Placement) (*schedule.Schedule, error) {
	refs := encode.AllInstances(spec.New(p, 1))
	starts := smt.Greedy(encode.InstanceProblem(spec.Spec{Placement: p}, refs, nil))
	if starts == nil {
		return nil, fmt.Errorf("placement %q: no list schedule of one micro-batch", p.Name)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}}
	for k, r := range refs {
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: starts[k]})
	}
	if err := verify.Schedule(s); err != nil {
		return nil, err
	}
	return s, nil
}
