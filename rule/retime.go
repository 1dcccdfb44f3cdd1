package rule

import (
	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Retimer is a rule that re-times: compact.Compact builds the system of
// a compaction — a variable per instance and the dependencies, with the
// device orders — and calls Constrain of every rule of the list that
// implements it, in the list's order, before it solves (keeping a
// schedule's decisions, the rule of the decisions makes their variables
// there, and compact adds the recomputes' device orders after the
// rules). Like Check, it
// is called for every compaction, not only those whose spec switches
// the rule on: a compaction may keep what its spec does not switch on
// (release times of a spec that shards nothing), and the rule adds
// constraints for what t holds.
type Retimer interface {
	Constrain(t *Retiming) error
}

// BackRetimer is a rule whose constraints point back in time: a latency
// budget's edge from each sink to the sources of its micro-batch,
// v_source ≥ v_sink + t_sink − budget. They close cycles with the
// dependencies, so the system is no longer solved in one topological
// pass but by relaxation. compact.Compact calls ConstrainBack of every
// rule of the list that implements it, in the list's order, after the
// Retimers' Constrain: compacting device orders, once it has solved the
// system without them (the topological pass, with its visit), whose
// least solution is then the relaxation's hint and floors — and where no
// rule adds a constraint back, the compaction's answer; keeping a
// schedule's decisions, before the system is solved as a whole.
type BackRetimer interface {
	ConstrainBack(t *Retiming) error
}

// Refuser is a rule that refuses a compaction it cannot time: what the
// compaction keeps (Retiming's Release, From, Pairs) with its spec, where
// the rule's constraints do not combine with them yet (release times
// under a latency budget or with decisions, overlapped pairs under a
// budget, decisions on links that carry one transfer at a time).
// compact.Compact asks every rule of the list that implements it, in the
// list's order, before it builds the system: for device orders and for
// release times at once, for a schedule kept once the schedule is
// verified. The first error is the compaction's, with compact's prefix;
// Sys, Var and the variables are not yet made.
type Refuser interface {
	Refuse(t *Retiming) error
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
	// Pairs are the overlapped pairs kept (compact.Keep's Pairs; merged
	// by rule.Merger before the system is built).
	Pairs []schedule.Pair
	// Var is the variable of an instance of Spec in Sys.
	Var func(r schedule.Ref) int
	// Decision, with From's decisions, is the variable of the start of
	// From's decision k; the next variable is its reload's (an
	// offload's; a recompute's is pinned at 0). The rule that times the
	// decisions makes these variables in its Constrain (rule/hostchan:
	// Sys.Var, their hints From's times) and sets Decision, for the
	// rules after it in the list (the memory orders) and for compact,
	// which orders the recomputes on their devices and reads the
	// solution; nil until then.
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

// Settler is a rule whose waits depend on the times themselves and so
// are no difference constraints under a latency budget: links that carry
// one transfer at a time book a tensor behind the transfers that start
// before it, and the latency rule's edges back from a sink, which delay
// a micro-batch's first blocks, change that order. compact.Compact calls
// Settle of every rule of the list that implements it, in the list's
// order, when a compaction of device orders has a latency budget; the
// first that answers gives the starts, and without one the system's
// relaxation does (the budget's edges being difference constraints).
type Settler interface {
	// Settle returns the least start of every variable under
	// s.Spec's latency budget, iterating s.Solve until the times
	// settle, or nil where s.Spec does not switch its waits on (then
	// the relaxation serves). An error of s.Solve comes back as it is;
	// where the times never settle (the orders meet no schedule within
	// the budget) the error says so, and compact prefixes it.
	Settle(s *Settling) ([]int, error)
}

// Settling is one compaction of device orders under a latency budget as
// a Settler iterates it.
type Settling struct {
	// Spec is the spec compacted for: its placement, micro-batches and
	// latency budget (above 0).
	Spec spec.Spec
	// Var is the variable of an instance of Spec.
	Var func(r schedule.Ref) int
	// Start is the least start of every variable without the budget
	// (by variable; the Settler must not change it).
	Start []int
	// Solve is the compaction without the budget with every variable v
	// starting at release[v] at least: its least starts (by variable),
	// exact for the releases given (the rules' waits as a Retimer adds
	// them, a Visit included).
	Solve func(release []int) ([]int, error)
}

// Merger is a rule that makes several instances one variable of a
// compaction of device orders: overlapped pairs start together and
// occupy their devices for the pair's time. compact.Compact calls Merge
// of every rule of the list that implements it, in the list's order,
// before it reads the device orders and the dependencies, which then run
// between the merged variables (consecutive instances of one variable
// add no edge). An error of Merge is the compaction's, with compact's
// prefix.
type Merger interface {
	Merge(m *Merging) error
}

// Merging is one compaction of device orders as the rules merge its
// instances.
type Merging struct {
	// Spec is the spec compacted for (its placement and micro-batches).
	Spec spec.Spec
	// Pairs are the overlapped pairs kept (compact.Keep's Pairs).
	Pairs []schedule.Pair
	// Join makes r's variable to's (to's own for to itself), occupying
	// its devices for time: r's end is then its variable's start plus
	// time. It reports false, and changes nothing, where r is already
	// joined. r and to must be instances of Spec.
	Join func(r, to schedule.Ref, time int) bool
}
