package placement

import "testing"

func TestLinksText(t *testing.T) {
	chain := func(transfers map[Dep]int, channels bool) *Placement {
		return &Placement{Name: "c", Devices: 3, Channels: channels,
			Blocks: []Block{{ID: "a", Kind: Forward, Devices: []int{0}, Time: 1}, {ID: "b", Kind: Forward, Devices: []int{1}, Time: 1}, {ID: "c", Kind: Forward, Devices: []int{2}, Time: 1}},
			Deps:   []Dep{{From: 0, To: 1}, {From: 1, To: 2}}, Transfers: transfers}
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
