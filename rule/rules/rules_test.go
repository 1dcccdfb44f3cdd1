package rules_test

import (
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/hostchan"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/spec"
)

// Every rule has its own name, and every rule a rule excludes is in the
// list (rule.Conflict reads Excludes both ways, so one side suffices).
func TestAll(t *testing.T) {
	names := map[string][]string{}
	for _, r := range rules.All() {
		if _, dup := names[r.Name()]; dup || r.Name() == "" {
			t.Errorf("rule name %q empty or repeated", r.Name())
		}
		names[r.Name()] = r.Excludes()
	}
	for n, ex := range names {
		for _, e := range ex {
			if _, ok := names[e]; !ok {
				t.Errorf("%s excludes %q, which is not a rule", n, e)
			}
		}
	}
}

// Unhandled returns the first rule, in the list's order, that the spec
// switches on and the step does not name, told apart by name; every rule
// has a title of its own for the skip message.
func TestUnhandled(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	queued := p.Clone()
	queued.QueuedLinks = true
	paired, err := p.WithOverlap(&placement.Overlap{Factor: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	offload := spec.Decisions{Offload: true}
	for _, c := range []struct {
		name    string
		sp      spec.Spec
		handled []rule.Rule
		want    string // "": nil
	}{
		{"nothing on", spec.New(p, 8), nil, ""},
		{"memory, unhandled", spec.Spec{Placement: p, MicroBatches: 8, Memory: 2}, nil, "memory"},
		{"memory, handled", spec.Spec{Placement: p, MicroBatches: 8, Memory: 2}, []rule.Rule{memory.Rule{}}, ""},
		{"latency", spec.Spec{Placement: p, MicroBatches: 8, Latency: 100}, []rule.Rule{memory.Rule{}}, "latency"},
		{"the list's order: decisions before links", spec.Spec{Placement: queued, MicroBatches: 8, Allowed: offload}, nil, "hostchan"},
		{"decisions handled, links not", spec.Spec{Placement: queued, MicroBatches: 8, Allowed: offload}, []rule.Rule{hostchan.Rule{}}, "links"},
		{"both handled", spec.Spec{Placement: queued, MicroBatches: 8, Allowed: offload}, []rule.Rule{links.Rule{}, hostchan.Rule{}}, ""},
		{"pairs", spec.New(paired, 8), []rule.Rule{links.Rule{}}, "pairs"},
	} {
		got := rules.Unhandled(c.sp, c.handled...)
		switch {
		case c.want == "" && got != nil:
			t.Errorf("%s: Unhandled = %s, want nil", c.name, got.Name())
		case c.want != "" && (got == nil || got.Name() != c.want):
			t.Errorf("%s: Unhandled = %v, want %s", c.name, got, c.want)
		}
	}
	titles := map[string]bool{}
	for _, r := range rules.All() {
		title := rule.Title(r)
		if title == r.Name() || titles[title] {
			t.Errorf("rule %s: title %q is its name or another rule's", r.Name(), title)
		}
		titles[title] = true
	}
}
