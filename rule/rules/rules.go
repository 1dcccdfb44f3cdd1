// Package rules is the one list of the rules beyond the dependencies and
// one block per device: adding a rule is one package under rule/ and one
// line here.
package rules

import (
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/rule/hostchan"
	"github.com/tessel-pp/tessel/rule/latency"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/pairs"
)

// All is every rule, in the order the verifier runs their hooks: the
// pairs first (the other checks time an instance by its pair), then the
// decisions, then the links (their order, then the arrivals), the memory
// budget on each device, the latency budget, sharded stages.
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
