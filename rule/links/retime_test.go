package links_test

import (
	"testing"

	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Constrain makes a tensor wait for the transfers booked before it on
// its link: a and b (device 0, time 1, in that order) both send to c
// (device 1) over one link taking 2 each, so with channels c starts at
// 5 (b's tensor waits for a's, 1..3, and arrives at 5), without them at
// 4 (b ends at 2, its tensor takes 2), and no visit is set.
func TestConstrain(t *testing.T) {
	for _, tc := range []struct {
		channels bool
		want     int
	}{{false, 4}, {true, 5}} {
		p := placementtest.TwoSenders(tc.channels)
		sys, rt := twoSenders(spec.New(p, 1), nil)
		if err := (links.Rule{}).Constrain(rt); err != nil {
			t.Fatal(err)
		}
		if (rt.Visit != nil) != tc.channels {
			t.Fatalf("channels %v: visit set %v", tc.channels, rt.Visit != nil)
		}
		start, ok := sys.Topological(rt.Visit)
		if !ok || start[2] != tc.want {
			t.Errorf("channels %v: starts %v (ok %v), want c at %d", tc.channels, start, ok, tc.want)
		}
	}
}

// twoSenders is the system of TwoSenders' orders and dependencies, its
// blocks' starts at release at least (nil: 0), and its re-timing for sp
// (a variable per block, one micro-batch).
func twoSenders(sp spec.Spec, release []int) (*system.System, *rule.Retiming) {
	p := sp.Placement
	sys := &system.System{Vars: 3, Floor: release}
	sys.Add(1, 0, p.Blocks[0].Time) // b after a on device 0
	for _, d := range p.Deps {
		sys.Add(d.To, d.From, p.Delay(d))
	}
	byBlock := func(r schedule.Ref) int { return r.Block }
	return sys, &rule.Retiming{Spec: sp, Var: byBlock, Ref: func(v int) schedule.Ref { return schedule.Ref{Block: v} }, Sys: sys}
}
