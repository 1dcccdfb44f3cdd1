package rules_test

import (
	"testing"

	"github.com/tessel-pp/tessel/rule/rules"
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
