package fsdp_test

import (
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/schedule"
)

// Constrain makes each release time the floor of its instance's
// variable, a negative one 0, and leaves the others alone.
func TestConstrain(t *testing.T) {
	v := func(r schedule.Ref) int { return 2*r.Block + r.Micro }
	sys := &system.System{Vars: 4}
	sys.Add(3, 2, 1) // b1^1 ≥ b1^0 + 1
	rel := map[schedule.Ref]int{{Block: 1, Micro: 0}: 5, {Block: 0, Micro: 1}: -3}
	if err := (fsdp.Rule{}).Constrain(&rule.Retiming{Release: rel, Var: v, Sys: sys}); err != nil {
		t.Fatal(err)
	}
	start, err := sys.Solve()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 0, 5, 6}; !slices.Equal(start, want) {
		t.Errorf("starts %v, want %v", start, want)
	}
}
