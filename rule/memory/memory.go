// Package memory is the rule of the memory budget: on every device the
// running memory — from 0, in start order, each instance's memory at its
// start, each decision's memory freed and returned (schedule's
// MemoryChanges) — never exceeds the device's budget (placement's Budget:
// the spec's Memory and the device's capacity, 0: unlimited).
package memory

import (
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is the memory budget.
type Rule struct{}

var _ interface {
	rule.Rule
	rule.DeviceChecker
	rule.Bounder
	rule.Retimer
} = Rule{}

// Name is "memory".
func (Rule) Name() string { return "memory" }

// Title is "the memory budget" (rule.Titled).
func (Rule) Title() string { return "the memory budget" }

// On reports whether some device of sp has a budget.
func (Rule) On(sp spec.Spec) bool { return sp.Placement.Limited(sp.Memory) }

// Excludes is none.
func (Rule) Excludes() []string { return nil }

// Check does nothing: the budget is checked device by device
// (CheckDevice).
func (Rule) Check(*rule.Checked, *rule.Report) {}

// CheckDevice reports each time device d's running memory rises above
// its budget (once per excursion over it, at the change that crosses it:
// an instance's start, or a decision's free or return).
func (Rule) CheckDevice(c *rule.Checked, r *rule.Report, d int) {
	budget := c.S.Placement.Budget(d, c.S.Memory)
	if budget == 0 {
		return
	}
	sum, over := 0, false
	for _, e := range c.MemoryChanges(d) {
		sum += e.Delta
		if sum > budget && !over {
			r.Add(schedule.Memory, d, []schedule.Ref{e.Ref}, "memory on device %d reaches %d > budget %d after %s at time %d",
				d, sum, budget, e.Text(c.S), e.Time)
		}
		over = sum > budget
	}
}
