package hostchan_test

import (
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/hostchan"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Constrain times every offload of PipeOffload's schedule on the v-shape
// (after its forward, the reload after the move out, the consumer after
// the move back) and chains the moves of each host channel in their
// given order; without decisions it adds nothing.
func TestConstrain(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithOffload(2)
	s, err := baseline.PipeOffload(spec.New(p, 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Decisions) == 0 {
		t.Fatal("PipeOffload took no decisions")
	}
	index := map[schedule.Ref]int{}
	for x, in := range s.Instances {
		index[in.Ref()] = x
	}
	ni := len(s.Instances)
	retiming := func(from *schedule.Schedule) (*rule.Retiming, *system.System) {
		sys := &system.System{Vars: ni, Hint: make([]int, ni)}
		return &rule.Retiming{Spec: s.Spec, From: from, Var: func(r schedule.Ref) int { return index[r] }, Sys: sys}, sys
	}
	rt, sys := retiming(&schedule.Schedule{Spec: s.Spec, Instances: s.Instances})
	if err := (hostchan.Rule{}).Constrain(rt); err != nil || len(sys.Cons) != 0 || sys.Vars != ni || rt.Decision != nil {
		t.Fatalf("without decisions: %d constraints, %d variables, %v", len(sys.Cons), sys.Vars, err)
	}
	rt, sys = retiming(s)
	if err := (hostchan.Rule{}).Constrain(rt); err != nil {
		t.Fatal(err)
	}
	// The decisions' variables, two each after the instances', hinted
	// at the schedule's times.
	if sys.Vars != ni+2*len(s.Decisions) || rt.Decision == nil {
		t.Fatalf("%d variables, want %d (two per decision)", sys.Vars, ni+2*len(s.Decisions))
	}
	for k, dc := range s.Decisions {
		if v := rt.Decision(k); v != ni+2*k || sys.Hint[v] != dc.Start || sys.Hint[v+1] != dc.Reload {
			t.Errorf("decision %d: variable %d hinted %d, %d; want %d hinted %d, %d", k, v, sys.Hint[v], sys.Hint[v+1], ni+2*k, dc.Start, dc.Reload)
		}
	}
	consumers := p.Consumers()
	moves := map[int]int{}
	for k, dc := range s.Decisions {
		st, tt, bt := ni+2*k, p.OffloadTime(dc.Block), p.Blocks[dc.Block].Time
		use := index[schedule.Ref{Block: consumers[dc.Block], Micro: dc.Micro}]
		for _, want := range []system.Constraint{{X: st, Y: index[dc.Ref()], W: bt}, {X: st + 1, Y: st, W: tt}, {X: use, Y: st + 1, W: tt}} {
			if !slices.Contains(sys.Cons, want) {
				t.Errorf("decision %d: no constraint %+v", k, want)
			}
		}
		for _, ch := range p.BlockSwitches(dc.Block) {
			moves[ch] += 2
		}
	}
	chained := 0
	for _, m := range moves {
		chained += m - 1
	}
	if got, want := len(sys.Cons), 3*len(s.Decisions)+chained; got != want {
		t.Errorf("%d constraints, want %d (3 per offload, each channel's moves chained)", got, want)
	}
	// The schedule given is a solution: every constraint holds at its times.
	val := make([]int, sys.Vars)
	for x, in := range s.Instances {
		val[x] = in.Start
	}
	for k, dc := range s.Decisions {
		val[ni+2*k], val[ni+2*k+1] = dc.Start, dc.Reload
	}
	for _, c := range sys.Cons {
		if c.Y >= 0 && val[c.X] < val[c.Y]+c.W {
			t.Errorf("PipeOffload's schedule breaks %+v", c)
		}
	}
}
