package placement

import (
	"bytes"
	"strings"
	"testing"
)

// A dependency may carry the size of its tensor, ["a", "b", size]; pairs
// stay valid with size 1, and a size of 1 is written as a pair, so that
// files without sizes keep their bytes (docs/formats.md, "Placement file").
func TestDependencySizes(t *testing.T) {
	p, err := Load(placementsDir + "/v-shape-sizes.json")
	if err != nil {
		t.Fatal(err)
	}
	f0f1 := Dep{From: p.Index("f0"), To: p.Index("f1")}
	f1b1 := Dep{From: p.Index("f1"), To: p.Index("b1")}
	b1b0 := Dep{From: p.Index("b1"), To: p.Index("b0")}
	for _, c := range []struct {
		d    Dep
		want float64
	}{{f0f1, 4}, {f1b1, 1}, {b1b0, 0.5}} {
		if got := p.Size(c.d); got != c.want {
			t.Errorf("size of %v = %g, want %g", c.d, got, c.want)
		}
	}
	q := p.Clone()
	q.Sizes[f0f1] = 1
	if p.Equal(q) {
		t.Error("placements with different sizes are equal")
	}
	var buf bytes.Buffer
	if err := q.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `["f0", "f1"],`) || !strings.Contains(buf.String(), `["b1", "b0", 0.5]`) {
		t.Errorf("a size of 1 is not written as a pair, or 0.5 is lost:\n%s", buf.String())
	}
	q.Sizes[f0f1] = -1
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "f0 -> f1: size must be in") {
		t.Errorf("negative size: %v", err)
	}
	q.Sizes = map[Dep]float64{{From: 0, To: 3}: 2}
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "size of 0 -> 3: no such dependency") {
		t.Errorf("size of no dependency: %v", err)
	}
}

// Budget is the least of the search's budget and a device's capacity
// among those set; 0 is unlimited on both sides.
func TestBudget(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	if p.Budget(2, 6) != 6 || p.Budget(2, 0) != 0 || p.Limited(0) || !p.Uniform(6) {
		t.Fatal("without capacities the budget is the search's")
	}
	p.Capacities = []int{8, 0, 4, 6}
	for _, c := range []struct{ memory, want []int }{
		{[]int{0}, []int{8, 0, 4, 6}},
		{[]int{5}, []int{5, 5, 4, 5}},
		{[]int{10}, []int{8, 10, 4, 6}},
	} {
		got := p.Budgets(c.memory[0])
		for d := range got {
			if got[d] != c.want[d] {
				t.Errorf("memory %d: budgets %v, want %v", c.memory[0], got, c.want)
				break
			}
		}
	}
	if !p.Limited(0) || p.Uniform(5) {
		t.Error("capacities limit devices and make budgets differ")
	}
	p.Capacities = []int{1, 2}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "capacities of 2 devices, want 4") {
		t.Errorf("capacities of the wrong length: %v", err)
	}
}
