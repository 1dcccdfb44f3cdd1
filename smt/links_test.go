package smt

import (
	"testing"

	"github.com/tessel-pp/tessel/z3"
)

// TestTransferRelease: a transfer released at 5 (its link busy until
// then with transfers outside the problem, as in a refine window) holds
// its consumer back: a (time 1) → b (time 1) over a link of 2 gives
// b ≥ 7 and the makespan 8, not 4. The list schedule, Feasible, the lower
// bound and the encoding (refuting 7, accepting 8) all say so.
func TestTransferRelease(t *testing.T) {
	p := &Problem{
		Devices:   2,
		Tasks:     []Task{{Name: "a", Devices: []int{0}, Time: 1}, {Name: "b", Devices: []int{1}, Time: 1}},
		Precs:     []Prec{{From: 0, To: 1, Lag: -2}},
		Transfers: []Transfer{{From: 0, To: 1, Link: 1, Time: 2, Release: 5}},
	}
	if g := Greedy(p); g == nil || p.Makespan(g) != 8 {
		t.Errorf("list schedule %v, want makespan 8", g)
	}
	if p.Feasible([]int{0, 6}) || !p.Feasible([]int{0, 7}) {
		t.Errorf("Feasible: b at 6 %v, at 7 %v; want false, true", p.Feasible([]int{0, 6}), p.Feasible([]int{0, 7}))
	}
	if lb := p.LowerBound(); lb != 8 {
		t.Errorf("lower bound %d, want 8", lb)
	}
	for _, c := range []struct {
		bound int
		want  z3.Status
	}{{7, z3.Unsat}, {8, z3.Sat}} {
		x, s := newTestSolver(t, z3.SolverOptions{})
		e, err := Encode(x, s, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.BoundMakespan(c.bound)
		mustCheck(t, s, c.want)
	}
}

// TestValidateTransfers: a transfer out of range, of time 0, or on a link
// whose producers share no device (so that no device orders them) is a
// malformed problem.
func TestValidateTransfers(t *testing.T) {
	base := func() *Problem {
		return &Problem{Devices: 3, Tasks: []Task{
			{Name: "a", Devices: []int{0}, Time: 1}, {Name: "b", Devices: []int{1}, Time: 1}, {Name: "c", Devices: []int{2}, Time: 1},
		}}
	}
	for _, tc := range []struct {
		name string
		trs  []Transfer
		ok   bool
	}{
		{"fine", []Transfer{{From: 0, To: 2, Link: 2, Time: 1}, {From: 1, To: 2, Link: 5, Time: 1}}, true},
		{"out of range", []Transfer{{From: 0, To: 3, Time: 1}}, false},
		{"to itself", []Transfer{{From: 1, To: 1, Time: 1}}, false},
		{"time 0", []Transfer{{From: 0, To: 2, Time: 0}}, false},
		{"producers apart", []Transfer{{From: 0, To: 2, Link: 2, Time: 1}, {From: 1, To: 2, Link: 2, Time: 1}}, false},
	} {
		p := base()
		p.Transfers = tc.trs
		if err := p.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	x, s := newTestSolver(t, z3.SolverOptions{})
	e, err := Encode(x, s, base(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Before(0, 1); err == nil {
		t.Error("Before of two tasks on different devices: no error")
	}
}
