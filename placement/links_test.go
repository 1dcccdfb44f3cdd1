package placement

import (
	"slices"
	"testing"
)

// sharedLinks: f0 and g0 on device 0 each send to a block on device 1 (link
// 0→1), h1 on device 1 sends back (link 1→0), and k on devices {1, 2}
// takes f1's tensor from f1's device.
func sharedLinks(channels bool) *Placement {
	return &Placement{Name: "two-senders", Devices: 3, Channels: channels,
		Blocks: []Block{
			{ID: "f0", Kind: Forward, Devices: []int{0}, Time: 1},
			{ID: "g0", Kind: Forward, Devices: []int{0}, Time: 1},
			{ID: "f1", Kind: Forward, Devices: []int{1}, Time: 1},
			{ID: "g1", Kind: Forward, Devices: []int{1}, Time: 1},
			{ID: "h0", Kind: Forward, Devices: []int{0}, Time: 1},
			{ID: "k", Kind: Forward, Devices: []int{1, 2}, Time: 1},
		},
		Deps:      []Dep{{0, 2}, {1, 3}, {3, 4}, {0, 5}},
		Transfers: map[Dep]int{{0, 2}: 3, {1, 3}: 3, {3, 4}: 2, {0, 5}: 1},
	}
}

// Links: a tensor leaves from the first device of its producer's group for
// every device of its consumer's; none when the transfer takes no time.
func TestLinks(t *testing.T) {
	p := sharedLinks(true)
	tests := []struct {
		dep  Dep
		want []Link
	}{
		{Dep{0, 2}, []Link{{0, 1}}},
		{Dep{3, 4}, []Link{{1, 0}}},
		{Dep{0, 5}, []Link{{0, 1}, {0, 2}}},
	}
	for _, tc := range tests {
		if got := p.Links(tc.dep); !slices.Equal(got, tc.want) {
			t.Errorf("Links(%v) = %v, want %v", tc.dep, got, tc.want)
		}
	}
	p.Transfers[Dep{0, 2}] = 0
	if got := p.Links(Dep{0, 2}); got != nil {
		t.Errorf("Links of a transfer of time 0 = %v, want none", got)
	}
}

// LinkQueue: a transfer waits for the one booked before it on its link,
// not for those on other links; without channels nothing waits and the
// arrival is start + Delay.
func TestLinkQueue(t *testing.T) {
	type ask struct {
		dep          Dep
		start        int
		at, waited   int
		busy         Link
		withoutQueue int
	}
	asks := []ask{
		{Dep{0, 2}, 0, 4, 0, Link{}, 4},      // f0 ends at 1, link 0→1 free: 1 + 3
		{Dep{1, 3}, 1, 7, 2, Link{0, 1}, 5},  // g0 ends at 2, link 0→1 busy until 4
		{Dep{3, 4}, 7, 10, 0, Link{}, 10},    // link 1→0 is another link
		{Dep{0, 5}, 2, 8, 4, Link{0, 1}, 4},  // f0 of the next micro-batch: 0→1 busy until 7, 0→2 free
		{Dep{1, 3}, 3, 11, 4, Link{0, 1}, 7}, // behind the last one on 0→1 (ends 8)
	}
	q := sharedLinks(true).NewLinkQueue()
	free := sharedLinks(false).NewLinkQueue()
	for n, a := range asks {
		at, waited, busy := q.Arrival(a.dep, a.start)
		if at != a.at || waited != a.waited || busy != a.busy {
			t.Errorf("ask %d, %v at %d: arrival %d, waited %d on %v; want %d, %d on %v", n, a.dep, a.start, at, waited, busy, a.at, a.waited, a.busy)
		}
		if at, waited, _ := free.Arrival(a.dep, a.start); at != a.withoutQueue || waited != 0 {
			t.Errorf("ask %d without channels: arrival %d, waited %d; want %d, 0", n, at, waited, a.withoutQueue)
		}
	}
	if got := q.Free(Link{0, 2}); got != 4 {
		t.Errorf("link 0→2 free at %d, want 4 (k's copy left at 3)", got)
	}
}
