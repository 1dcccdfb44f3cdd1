// Package latency is the rule of a latency budget (spec's Latency): every
// micro-batch's latency — its first block's start to its last block's end
// (schedule.Latencies) — is at most the budget.
package latency

import (
	"errors"

	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is the latency budget.
type Rule struct{}

var _ interface {
	rule.Rule
	rule.Bounder
	rule.BackRetimer
	rule.Refuser
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

// Refuse refuses, under a budget, a compaction of device orders that
// keeps release times (the relaxation's floors are the least starts
// without the budget) or overlapped pairs (not merged under a budget
// yet); a schedule kept (Retiming.From) keeps no pairs.
func (Rule) Refuse(t *rule.Retiming) error {
	if t.Spec.Latency <= 0 {
		return nil
	}
	if t.Release != nil {
		// The words of release times with decisions (rule/hostchan's).
		return errors.New("release times with decisions or a latency budget")
	}
	if t.From == nil && len(t.Pairs) > 0 {
		return errors.New("overlapped pairs under a latency budget")
	}
	return nil
}

// ConstrainBack adds the budget to a compaction under one
// (rule.BackRetimer): an edge back from every sink of each micro-batch to
// every source of it (placement's LatencyPairs), v_source ≥ v_sink +
// t_sink − budget, so that the sink ends at most the budget after the
// source starts. These edges close cycles with the dependencies, of
// weight ≤ 0 where the budget admits the orders: the compaction relaxes
// them, delaying a micro-batch's first blocks only as much as its budget
// asks.
func (Rule) ConstrainBack(t *rule.Retiming) error {
	budget := t.Spec.Latency
	if budget <= 0 {
		return nil
	}
	p := t.Spec.Placement
	pairs := p.LatencyPairs()
	for m := range t.Spec.MicroBatches {
		for _, lp := range pairs {
			t.Sys.Add(t.Var(schedule.Ref{Block: lp.Source, Micro: m}), t.Var(schedule.Ref{Block: lp.Sink, Micro: m}), p.Blocks[lp.Sink].Time-budget)
		}
	}
	return nil
}
