// Package rule is the interface of the rules a schedule keeps beyond its
// dependencies and one block per device: the memory budget, the latency
// budget, host channels and the keep/offload/recompute decisions, links
// that carry one transfer at a time, overlapped pairs. Each rule lives in
// a package of its own under rule/ and is registered in one list
// (rules.All); the verifier (package verify) loops over that list.
//
// A rule's hooks:
//
//   - Name: the rule's name, in messages and in Excludes.
//   - On: whether a spec switches the rule on (a memory budget, a latency
//     budget, decisions allowed, channels, an overlap rule, ...).
//   - Excludes: the rules it cannot be combined with yet (Conflict says
//     which, for a spec).
//   - Check: its violations in a schedule, each named; it runs for every
//     schedule the verifier checks, not only those whose spec switches
//     it on, since a schedule may carry what its spec does not allow (a
//     decision, a pair, a link order) and the rule says so.
//
// Optional hooks, each its own interface so that a rule takes only those
// it needs: Indexer (check the rule's own part of a schedule and index it
// for the other checks, before the dependencies are checked),
// DeviceChecker (a check on each device, after that device's overlaps),
// Bounder (the rule's arguments of a spec's lower bounds), Relaxer (a
// rule whose bounds are those of a relaxed spec), Titled (the rule in
// words), and the re-timing's (package compact): Retimer (the rule's
// variables and constraints of a compaction), BackRetimer (its
// constraints that point back in time), Settler, Merger and Refuser
// (what a compaction keeps that the rule cannot time yet).
// rules.LowerBounds loops over the list as the verifier does: bound.Of
// with every rule; so does compact.Compact, with every rule that
// re-times. A step that handles only some rules asks Unhandled
// which rule a spec switches on that it does not.
package rule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is one rule of the timing model beyond the dependencies and one
// block per device.
type Rule interface {
	// Name is the rule's name: "memory", "latency", ...
	Name() string
	// On reports whether sp switches the rule on.
	On(sp spec.Spec) bool
	// Excludes names the rules this one cannot be combined with.
	Excludes() []string
	// Check reports the rule's violations in c's schedule to r. The
	// verifier calls it after the dependencies and the devices are
	// checked, in the order of rules.All.
	Check(c *Checked, r *Report)
}

// Indexer is a rule that checks its own part of a schedule (its pairs,
// decisions, link order) before the dependencies and the devices are
// checked, and records in c what those checks read (Checked's Pairs,
// Decided, Reruns, Arrivals).
type Indexer interface {
	Index(c *Checked, r *Report)
}

// DeviceChecker is a rule with a check on each device d, which the
// verifier calls after d's overlaps are checked (so that the report lists
// a device's violations together).
type DeviceChecker interface {
	CheckDevice(c *Checked, r *Report, d int)
}

// Bounder is a rule that bounds: Bound(sp, at, b) raises b, the lower
// bounds of sp so far, by the rule's arguments at step at (bound.Step:
// the order decides which argument names a bound two reach, and some
// start from the bound so far), naming its own (Bounds.Raise with a
// bound.MakespanBound the rule declares). bound.Of calls it where sp
// switches the rule on.
type Bounder = bound.Bounder

// Relaxer is a rule whose bounds are those of a relaxed spec, scaled back
// (bound.Relaxer): Relax(sp) returns the relaxed spec, the rule off in
// it, and the factor k of its times.
type Relaxer = bound.Relaxer

// Conflict is an error naming the first two rules of list that sp
// switches on and that cannot be combined (one Excludes the other), or
// nil.
func Conflict(sp spec.Spec, list []Rule) error {
	var on []Rule
	for _, r := range list {
		if r.On(sp) {
			on = append(on, r)
		}
	}
	for _, a := range on {
		for _, b := range on {
			if a.Name() != b.Name() && slices.Contains(a.Excludes(), b.Name()) {
				return fmt.Errorf("%s with %s: not supported", a.Name(), b.Name())
			}
		}
	}
	return nil
}

// Names lists the names of the rules of list that sp switches on, joined
// by ", " (or "none").
func Names(sp spec.Spec, list []Rule) string {
	var on []string
	for _, r := range list {
		if r.On(sp) {
			on = append(on, r.Name())
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ", ")
}
