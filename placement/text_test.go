package placement

import "testing"

func TestLinksText(t *testing.T) {
	chain := func(transfers map[Dep]int, channels bool) *Placement {
		return &Placement{Name: "c", Devices: 3,
			Blocks: []Block{{ID: "a", Kind: Forward, Devices: []int{0}, Time: 1}, {ID: "b", Kind: Forward, Devices: []int{1}, Time: 1}, {ID: "c", Kind: Forward, Devices: []int{2}, Time: 1}},
			Deps:   []Dep{{From: 0, To: 1}, {From: 1, To: 2}}, Timing: Timing{Transfers: transfers, QueuedLinks: channels}}
	}
	for _, c := range []struct {
		name string
		p    *Placement
		want string
	}{
		{"free", chain(nil, false), ""},
		{"one time", chain(map[Dep]int{{From: 0, To: 1}: 2, {From: 1, To: 2}: 2}, false), "every transfer between devices takes 2"},
		{"range", chain(map[Dep]int{{From: 0, To: 1}: 1, {From: 1, To: 2}: 3}, true), "transfers between devices take 1 to 3; each link carries one at a time, the others queue"},
	} {
		if got := c.p.LinksText(); got != c.want {
			t.Errorf("%s: LinksText = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestBudgetText(t *testing.T) {
	p := &Placement{Devices: 3}
	q := &Placement{Devices: 3, Timing: Timing{Capacities: []int{4, 6, 0}}}
	for _, c := range []struct {
		p      *Placement
		memory int
		want   string
	}{
		{p, 0, "unlimited"}, {p, 5, "5"}, {q, 0, "[4 6 0]"}, {q, 5, "[4 5 5]"}, {q, 3, "3"},
	} {
		if got := c.p.BudgetText(c.memory); got != c.want {
			t.Errorf("%v, memory %d: BudgetText = %q, want %q", c.p.Capacities, c.memory, got, c.want)
		}
	}
}
