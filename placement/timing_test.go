package placement

import (
	"encoding/json"
	"reflect"
	"testing"
)

// timed is a chain of three blocks on three devices with every field of
// Timing set.
func timed() *Placement {
	ab, bc := Dep{From: 0, To: 1}, Dep{From: 1, To: 2}
	return &Placement{Name: "timed", Devices: 3,
		Blocks: []Block{{ID: "a", Kind: Forward, Devices: []int{0}, Time: 1}, {ID: "b", Kind: Forward, Devices: []int{1}, Time: 1}, {ID: "c", Kind: Forward, Devices: []int{2}, Time: 1}},
		Deps:   []Dep{ab, bc},
		Timing: Timing{Transfers: map[Dep]int{ab: 2, bc: 3}, Capacities: []int{5, 0, 7}, QueuedLinks: true,
			Lanes: map[Dep][]int{ab: {2, 4}}, Switches: []int{0, 0, 2},
			Costs: &Costs{Times: [][]int{{1}, {1}, {1}}, Transfers: map[Dep][][]int{ab: {{2}}, bc: {{3}}}}},
	}
}

// TestTimingWritten: a placement as written, built in or read, has a
// zero Timing.
func TestTimingWritten(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Placement{p, q} {
		if !reflect.DeepEqual(r.Timing, Timing{}) {
			t.Errorf("%s: Timing = %+v, want zero", r.Name, r.Timing)
		}
	}
}

// TestTimingCopies: Clone copies the whole Timing deeply; Bare keeps the
// devices' part (capacities, queued links, switches) and none of the
// blocks' (transfers, lanes, costs).
func TestTimingCopies(t *testing.T) {
	p := timed()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	q := p.Clone()
	if !reflect.DeepEqual(q.Timing, p.Timing) || !q.Equal(p) {
		t.Fatalf("Clone's Timing = %+v, want %+v", q.Timing, p.Timing)
	}
	q.Transfers[Dep{From: 0, To: 1}], q.Capacities[0], q.Lanes[Dep{From: 0, To: 1}][1], q.Switches[1], q.Costs.Times[0][0] = 9, 9, 9, 1, 9
	if !reflect.DeepEqual(p.Timing, timed().Timing) {
		t.Errorf("changing a clone's Timing changed the original's: %+v", p.Timing)
	}
	b := p.Bare("bare")
	want := Timing{Capacities: p.Capacities, QueuedLinks: true, Switches: p.Switches}
	if !reflect.DeepEqual(b.Timing, want) {
		t.Errorf("Bare's Timing = %+v, want %+v", b.Timing, want)
	}
	b.Capacities[0], b.Switches[1] = 9, 1
	if p.Capacities[0] != 5 || p.Switches[1] != 0 {
		t.Error("changing Bare's Timing changed the original's")
	}
}

// TestTimingEqual: Equal tells placements apart by every part of Timing
// but the costs, and holds a missing value equal to its zero.
func TestTimingEqual(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*Placement)
		equal  bool
	}{
		{"same", func(*Placement) {}, true},
		{"queued links", func(q *Placement) { q.QueuedLinks = false }, false},
		{"transfer", func(q *Placement) { q.Transfers[Dep{From: 1, To: 2}] = 4 }, false},
		{"lanes", func(q *Placement) { q.Lanes = nil }, false},
		{"capacity", func(q *Placement) { q.Capacities[2] = 6 }, false},
		{"switch", func(q *Placement) { q.Switches = nil }, false},
		{"costs", func(q *Placement) { q.Costs = nil }, true},
	} {
		q := timed()
		c.change(q)
		if got := timed().Equal(q); got != c.equal {
			t.Errorf("%s: Equal = %v, want %v", c.name, got, c.equal)
		}
	}
	p, q := timed(), timed()
	p.Transfers[Dep{From: 1, To: 2}], q.Transfers = 0, map[Dep]int{{From: 0, To: 1}: 2}
	p.Capacities, q.Capacities = []int{0, 0, 0}, nil
	p.Switches, q.Switches = []int{0, 1, 2}, nil
	if !p.Equal(q) {
		t.Error("a missing transfer, capacity or switch differs from 0, 0 or a switch of its own")
	}
}
