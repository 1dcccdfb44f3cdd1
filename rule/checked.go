package rule

import (
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Checked is a schedule as the verifier has indexed it: what its checks
// and the rules' share. The verifier fills S, OK and First; the rules'
// Index hooks fill the rest.
type Checked struct {
	S *schedule.Schedule
	// OK marks the instances that name an existing block and micro-batch
	// and start in range; only those take part in the timing checks.
	OK []bool
	// First maps an instance to the index of its first occurrence in
	// S.Instances among the OK ones.
	First map[schedule.Ref]int
	// Decided marks the decisions that name a present forward instance
	// with an action its block allows, once; only those take part in the
	// timing and memory checks (rule hostchan).
	Decided []bool
	// Reruns lists, for every device, the recomputes of the decisions
	// that take part in the checks (rule hostchan); nil without any.
	Reruns [][]schedule.Rerun
	// Pairs indexes the valid overlapped pairs (rule pairs); the zero
	// value has none.
	Pairs schedule.Occupancy
	// Arrivals is when each tensor reaches its consumer's devices where
	// links carry one transfer at a time (rule links); nil otherwise:
	// a tensor arrives at its producer's start plus the placement's
	// Delay.
	Arrivals map[placement.LinkTransfer]Arrival
	// Devices lists, for every device, the OK instances that occupy it
	// in the verifier's order (schedule.DeviceInstances); set before the
	// device checks.
	Devices [][]int

	changes [][]schedule.MemoryChange
}

// Arrival is when a tensor reaches its consumer's devices, and how long
// its transfer waited for which link.
type Arrival struct {
	At, Waited int
	Busy       placement.Link
}

// NewChecked is s with no instance checked yet.
func NewChecked(s *schedule.Schedule) *Checked {
	return &Checked{S: s, OK: make([]bool, len(s.Instances)), First: make(map[schedule.Ref]int, len(s.Instances)), Decided: make([]bool, len(s.Decisions))}
}

// Present reports whether instance x takes part in the timing checks:
// OK and the first occurrence of its block and micro-batch.
func (c *Checked) Present(x int) bool { return c.OK[x] && c.First[c.S.Instances[x].Ref()] == x }

// Name is B_i^n as people read it, e.g. "f1^2".
func (c *Checked) Name(ref schedule.Ref) string { return schedule.RefName(c.S, ref) }

// End is when instance x ends: its pair's time where it leads a pair.
func (c *Checked) End(x int) int {
	in := c.S.Instances[x]
	return in.Start + c.Pairs.Duration(c.S.Placement, in.Ref())
}

// Span is "[start,end)" of instance x.
func (c *Checked) Span(x int) string {
	return fmt.Sprintf("[%d,%d)", c.S.Instances[x].Start, c.End(x))
}

// MemoryChanges is the changes of device d's memory in order: the
// starts of its instances (Devices) and the frees and returns of the
// Decided decisions (schedule.MemoryChanges).
func (c *Checked) MemoryChanges(d int) []schedule.MemoryChange {
	if c.changes == nil {
		c.changes = schedule.MemoryChanges(c.S, c.Devices, c.Decided)
	}
	return c.changes[d]
}
