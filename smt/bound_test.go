package smt

import "testing"

// Jackson's preemptive bound sees what the earliest-start + load + tail
// bound does not: a device that must wait for a late release, and a long
// tail that must start early.
func TestLowerBoundJackson(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Problem
		want int
	}{
		{"release gap", Problem{Devices: 1, Tasks: []Task{
			{Name: "a", Devices: []int{0}, Time: 1},
			{Name: "b", Devices: []int{0}, Time: 1, Release: 5},
		}}, 6},
		{"tail first", Problem{Devices: 2, Tasks: []Task{
			{Name: "a", Devices: []int{0}, Time: 2},
			{Name: "b", Devices: []int{0}, Time: 2},
			{Name: "c", Devices: []int{1}, Time: 4},
		}, Precs: []Prec{{From: 1, To: 2}}}, 6},
	} {
		if got := c.p.LowerBound(); got != c.want {
			t.Errorf("%s: lower bound %d, want %d", c.name, got, c.want)
		}
		sol, err := MinimizeMakespan(t.Context(), &c.p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !sol.Proven || sol.Makespan != c.want {
			t.Errorf("%s: makespan %d proven %v, want %d", c.name, sol.Makespan, sol.Proven, c.want)
		}
	}
}
