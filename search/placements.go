package search

import (
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// WriteBuiltins writes every built-in placement under o, as tessel
// placements lists them: its summary, its blocks and the picture of one
// micro-batch (OneMicroBatch). A built-in that o does not allow is one
// line saying why.
func WriteBuiltins(w io.Writer, o placement.Options) error {
	for k, name := range placement.BuiltinNames() {
		if k > 0 {
			fmt.Fprintln(w)
		}
		p, err := placement.Builtin(name, o)
		if err != nil {
			fmt.Fprintf(w, "%s: not available with these options: %v\n", name, err)
			continue
		}
		summary := placement.BuiltinSummary(name)
		if o.SplitBackward && !o.Inference {
			summary += "; every backward b split into input i and weight w"
		}
		if o.Chunks > 1 {
			summary += fmt.Sprintf("; %d stages, %d per device, order %s", o.Chunks*o.Devices, o.Chunks, o.Order)
		}
		fmt.Fprintf(w, "%s — %s\n", p.Name, summary)
		fmt.Fprintf(w, "%d blocks on %d devices, device loads %v, critical path %d\n", p.K(), p.Devices, p.Loads(), p.CriticalPath())
		s, err := OneMicroBatch(p)
		if err != nil {
			return err
		}
		if err := schedule.RenderText(s, w); err != nil {
			return err
		}
	}
	return nil
}

// OneMicroBatch schedules one micro-batch with a list schedule (every
// block as soon as its inputs and devices are ready): the picture of a
// placement, its independent branches side by side. The schedule is
// verified.
func OneMicroBatch(p *placement.Placement) (*schedule.Schedule, error) {
	refs := smt.AllInstances(p, 1)
	starts := smt.Greedy(smt.InstanceProblem(p, refs, 0, nil))
	if starts == nil {
		return nil, fmt.Errorf("placement %q: no list schedule of one micro-batch", p.Name)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}}
	for k, r := range refs {
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: starts[k]})
	}
	if err := schedule.Verify(s); err != nil {
		return nil, err
	}
	return s, nil
}
