// Package latency is the rule of a latency budget (spec's Latency): every
// micro-batch's latency — its first block's start to its last block's end
// (schedule.Latencies) — is at most the budget.
package latency

import (
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is the latency budget.
type Rule struct{}

var _ interface {
	rule.Rule
	rule.Bounder
} = Rule{}

// Name is "latency".
func (Rule) Name() string { return "latency" }

// Title is "the latency budget" (rule.Titled).
func (Rule) Title() string { return "the latency budget" }

// On reports whether sp has a latency budget.
func (Rule) On(sp spec.Spec) bool { return sp.Latency > 0 }

// Excludes is none: the budget combines with every other rule.
func (Rule) Excludes() []string { return nil }

// Check reports every micro-batch whose latency exceeds the budget,
// naming the instances that make it.
func (Rule) Check(c *rule.Checked, r *rule.Report) {
	s := c.S
	if s.Latency <= 0 {
		return
	}
	ok := &schedule.Schedule{Spec: spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches}}
	for x, in := range s.Instances {
		if c.Present(x) {
			ok.Instances = append(ok.Instances, in)
		}
	}
	for _, l := range schedule.Latencies(ok) {
		if l.Latency > s.Latency {
			r.Add(schedule.Latency, -1, []schedule.Ref{l.First, l.Last}, "latency of micro-batch %d is %d > budget %d: %s starts at %d, %s ends at %d",
				l.Micro, l.Latency, s.Latency, c.Name(l.First), l.Start, c.Name(l.Last), l.End)
		}
	}
}
