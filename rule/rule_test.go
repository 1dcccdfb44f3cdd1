package rule_test

import (
	"testing"

	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/spec"
)

// fake is a rule switched on by a latency budget at least on.
type fake struct {
	name     string
	on       int
	excludes []string
}

func (f fake) Name() string                      { return f.name }
func (f fake) On(sp spec.Spec) bool              { return sp.Latency >= f.on }
func (f fake) Excludes() []string                { return f.excludes }
func (f fake) Check(*rule.Checked, *rule.Report) {}

func TestConflict(t *testing.T) {
	list := []rule.Rule{fake{"a", 1, nil}, fake{"b", 2, []string{"a"}}, fake{"c", 3, nil}}
	for _, c := range []struct {
		latency int
		want    string
		names   string
	}{
		{0, "", "none"},
		{1, "", "a"},
		{2, "b with a: not supported", "a, b"},
		{3, "b with a: not supported", "a, b, c"},
	} {
		err := rule.Conflict(spec.Spec{Latency: c.latency}, list)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("latency %d: Conflict = %q, want %q", c.latency, got, c.want)
		}
		if n := rule.Names(spec.Spec{Latency: c.latency}, list); n != c.names {
			t.Errorf("latency %d: Names = %q, want %q", c.latency, n, c.names)
		}
	}
}

func TestReport(t *testing.T) {
	var r rule.Report
	if r.Err() != nil {
		t.Fatal("an empty report is an error")
	}
	for range 60 {
		r.Add("memory", 0, nil, "over %d", 1)
	}
	r.Omit()
	err := r.Err()
	if err == nil || err.Error() != "invalid schedule: over 1 (and 60 more violations)" {
		t.Errorf("Err = %v", err)
	}
}
