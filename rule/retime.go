package rule

import (
	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Retimer is a rule that re-times: compact.Compact builds the system of
// a compaction — a variable per instance, the device orders and the
// dependencies (and, keeping a schedule's decisions, their variables and
// orders) — and calls Constrain of every rule of the list that
// implements it, in the list's order, before it solves. Like Check, it
// is called for every compaction, not only those whose spec switches
// the rule on: a compaction may keep what its spec does not switch on
// (release times of a spec that shards nothing), and the rule adds
// constraints for what t holds.
type Retimer interface {
	Constrain(t *Retiming) error
}

// Retiming is one compaction as the rules constrain it.
type Retiming struct {
	// Spec is the spec compacted for (its latency budget, ...).
	Spec spec.Spec
	// Release is the earliest start of some instances (compact.Keep's),
	// each naming an instance of Spec: a rule's wait that is no
	// dependency (FSDP's gathered parameters).
	Release map[schedule.Ref]int
	// From is the schedule whose orders and decisions the compaction
	// keeps (compact.Keep's From), nil where it keeps device orders
	// alone.
	From *schedule.Schedule
	// Var is the variable of an instance of Spec in Sys.
	Var func(r schedule.Ref) int
	// Decision, with From, is the variable of the start of From's
	// decision k; the next variable is its reload's (an offload's; a
	// recompute's is pinned at 0).
	Decision func(k int) int
	// Sys is the compaction's difference constraints.
	Sys *system.System
	// Ref, with the orders' graph, is the instance of a variable of Sys
	// (Var's inverse); nil with a schedule's decisions.
	Ref func(v int) schedule.Ref
	// Visit, when a rule sets it, is called by the topological pass of
	// the orders' graph as each variable's value becomes final, in the
	// pass's order (system.System.Topological): a rule whose waits
	// depend on the order of the times, links that carry one transfer
	// at a time, books them there and raises the later variables.
	Visit func(v int, start []int)
}
