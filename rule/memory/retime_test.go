package memory_test

import (
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/hostchan"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Constrain chains every device's memory changes of a schedule that
// offloads and recomputes in their given order, which the schedule
// itself keeps; it adds nothing without decisions and refuses decisions
// whose variables no rule made.
func TestConstrain(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		build func(spec.Spec) (*schedule.Schedule, error)
		p     *placement.Placement
	}{
		{"offload", baseline.PipeOffload, p.WithOffload(2)},
		{"recompute", baseline.OneFOneBRecompute, p.WithRecompute()},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.build(spec.New(c.p, 4))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Decisions) == 0 {
				t.Fatal("no decisions")
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
			if err := (memory.Rule{}).Constrain(rt); err != nil || len(sys.Cons) != 0 {
				t.Fatalf("without decisions: %d constraints, %v", len(sys.Cons), err)
			}
			rt, _ = retiming(s)
			if err := (memory.Rule{}).Constrain(rt); err == nil {
				t.Fatal("decisions without variables: no error")
			}
			rt, sys = retiming(s)
			if err := (hostchan.Rule{}).Constrain(rt); err != nil {
				t.Fatal(err)
			}
			before := len(sys.Cons)
			if err := (memory.Rule{}).Constrain(rt); err != nil {
				t.Fatal(err)
			}
			// Each device's changes chained: one constraint fewer than
			// its changes (an instance, two per decision).
			want := 0
			for d := range c.p.Devices {
				n := 0
				for _, in := range s.Instances {
					if c.p.OnDevice(in.Block, d) {
						n++
					}
				}
				for _, dc := range s.Decisions {
					if c.p.OnDevice(dc.Block, d) {
						n += 2
					}
				}
				if n > 0 {
					want += n - 1
				}
			}
			if got := len(sys.Cons) - before; got != want {
				t.Errorf("%d memory orders, want %d", got, want)
			}
			// The schedule given is a solution.
			val := make([]int, sys.Vars)
			for x, in := range s.Instances {
				val[x] = in.Start
			}
			for k, dc := range s.Decisions {
				val[rt.Decision(k)], val[rt.Decision(k)+1] = dc.Start, dc.Reload
			}
			for _, con := range sys.Cons[before:] {
				if val[con.X] < val[con.Y]+con.W {
					t.Errorf("the schedule breaks %+v", con)
				}
			}
		})
	}
}
