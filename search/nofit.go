package search

import (
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// ErrNoFit means that no schedule at all fits the memory budget: some
// device needs more for one micro-batch than its budget
// (schedule.LeastMemory). Raising N_R cannot help; only memory can.
var ErrNoFit = errors.New("no schedule fits the memory budget")

// NoFitError says which device is short and what every schedule needs.
type NoFitError struct {
	Placement string
	Memory    int             // the budget the search was given
	Need      schedule.Need   // the device short by most
	Budget    int             // its budget
	Needs     []schedule.Need // every device's
	// Capacity is the device's own capacity where that is what binds
	// (0: the search's budget binds).
	Capacity int
	text     string
}

// Least is the least one budget (--memory) under which every device's
// need is met, and whether every need is exact (else it is a bound).
func (e *NoFitError) Least() (memory int, exact bool) {
	exact = true
	for _, x := range e.Needs {
		memory = max(memory, x.Memory)
		exact = exact && x.Exact
	}
	return memory, exact
}

func (e *NoFitError) Error() string {
	msg := fmt.Sprintf("placement %q: memory %d: %v: %s", e.Placement, e.Memory, ErrNoFit, e.text)
	if e.Capacity > 0 {
		return msg + " (its capacity)"
	}
	least, exact := e.Least()
	if exact {
		return msg + fmt.Sprintf("; the least budget any schedule needs is %d (one micro-batch at a time)", least)
	}
	return msg + fmt.Sprintf("; every schedule needs a budget of at least %d", least)
}

func (e *NoFitError) Unwrap() error { return ErrNoFit }

// noFit is the NoFitError of sp when some device's budget is below its
// need (with offload and recompute where allowed), among the needs
// LeastMemory proves where proven is set; nil otherwise.
func noFit(sp spec.Spec, proven bool) *NoFitError {
	p, memory := sp.Placement, sp.Memory
	needs := schedule.LeastMemory(p, sp.Allowed.Offload, sp.Allowed.Recompute)
	need, budget, ok := schedule.Short(p, memory, needs, proven)
	if !ok {
		return nil
	}
	e := &NoFitError{Placement: p.Name, Memory: memory, Need: need, Budget: budget, Needs: needs,
		text: schedule.NeedText(p, need, budget, nil)}
	if d := need.Device; d < len(p.Capacities) && p.Capacities[d] > 0 && p.Capacities[d] == budget {
		e.Capacity = p.Capacities[d]
	}
	return e
}
