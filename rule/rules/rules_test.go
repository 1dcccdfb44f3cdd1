package rules_test

import (
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/rule/rules"
)

// Every rule has its own name, and every rule a rule excludes is in the
// list and excludes it back (so that Conflict does not depend on the
// order of the list).
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
			back, ok := names[e]
			if !ok {
				t.Errorf("%s excludes %q, which is not a rule", n, e)
			} else if !slices.Contains(back, n) {
				t.Errorf("%s excludes %s, but not the other way round", n, e)
			}
		}
	}
}
