// Package rules is the one list of the rules beyond the dependencies and
// one block per device, and the lower bounds of a spec under them:
// adding a rule is one package under rule/ and one line here.
package rules

import (
	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/rule/hostchan"
	"github.com/tessel-pp/tessel/rule/latency"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/pairs"
	"github.com/tessel-pp/tessel/spec"
)

// All is every rule, in the order the verifier runs their hooks: the
// pairs first (the other checks time an instance by its pair), then the
// decisions, then the links (their order, then the arrivals), the memory
// budget on each device, the latency budget, sharded stages. The lower
// bounds run the rules' arguments in the same order within each step
// (bound.Step).
func All() []rule.Rule {
	return []rule.Rule{
		pairs.Rule{},
		hostchan.Rule{},
		links.Rule{},
		memory.Rule{},
		latency.Rule{},
		fsdp.Rule{},
	}
}

// LowerBounds returns the lower bounds of the spec (its placement must be
// valid): of the period of a repetend, of the makespan of its
// micro-batches, and which argument gives the makespan's (Bounds.By). It
// is bound.Of with every rule of All: the arguments every spec has (the
// critical path, the blocks on every device, each device's load) and
// those of each rule the spec switches on — the links' loads
// (links.Bound), the memory budget's period, hold and memory-time
// (memory.Bound), the latency budget (latency.Bound), sharded stages
// (fsdp.Bound), the relaxation of overlapped pairs (pairs.Relax).
func LowerBounds(sp spec.Spec) bound.Bounds {
	all := All()
	list := make([]bound.Rule, len(all))
	for i, r := range all {
		list[i] = r
	}
	return bound.Of(sp, list)
}

// Unhandled is rule.Unhandled over All: the first rule sp switches on
// that none of handled is, or nil. A step asks it with the rules it
// handles, and where it is not nil, is skipped for the rule returned
// (rule.Title says it in words).
func Unhandled(sp spec.Spec, handled ...rule.Rule) rule.Rule {
	return rule.Unhandled(sp, All(), handled...)
}
