package placement

import (
	"slices"
	"strings"
	"testing"
)

// sharedLinks: f0 and g0 on device 0 each send to a block on device 1 (link
// 0→1), h1 on device 1 sends back (link 1→0), and k on devices {1, 2}
// takes f1's tensor from f1's device.
func sharedLinks(channels bool) *Placement {
	return &Placement{Name: "two-senders", Devices: 3,
		Blocks: []Block{
			{ID: "f0", Kind: Forward, Devices: []int{0}, Time: 1},
			{ID: "g0", Kind: Forward, Devices: []int{0}, Time: 1},
			{ID: "f1", Kind: Forward, Devices: []int{1}, Time: 1},
			{ID: "g1", Kind: Forward, Devices: []int{1}, Time: 1},
			{ID: "h0", Kind: Forward, Devices: []int{0}, Time: 1},
			{ID: "k", Kind: Forward, Devices: []int{1, 2}, Time: 1},
		},
		Deps:   []Dep{{0, 2}, {1, 3}, {3, 4}, {0, 5}},
		Timing: Timing{Transfers: map[Dep]int{{0, 2}: 3, {1, 3}: 3, {3, 4}: 2, {0, 5}: 1}, QueuedLinks: channels},
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

// A pair of several links (Lanes; Wu et al., "Rethinking Dynamic Networks
// and Heterogeneous Computing with Automatic Parallelization", §3.1, eq 7):
// each link is a queue of its own and a transfer takes the one where it
// ends first, its time on that link.
func TestLinkQueueLanes(t *testing.T) {
	p := sharedLinks(true)
	// f0 → f1 and g0 → g1 cross 0→1, which has two links: 3 and 5.
	p.Lanes = map[Dep][]int{{0, 2}: {3, 5}, {1, 3}: {3, 5}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	q := p.NewLinkQueue()
	at, w, _ := q.Arrival(Dep{0, 2}, 0)
	if at != 4 || w != 0 {
		t.Errorf("first: %d, waited %d", at, w)
	}
	at, w, _ = q.Arrival(Dep{1, 3}, 1) // ends 2: first link free at 4 → 7; second free → 7: tie, the first
	if at != 7 || w != 2 {
		t.Errorf("second: %d, waited %d", at, w)
	}
	at, w, _ = q.Arrival(Dep{0, 2}, 2) // ends 3: first free at 7 → 10; second free → 8
	if at != 8 || w != 0 {
		t.Errorf("third: %d, waited %d", at, w)
	}
	at, w, _ = q.Arrival(Dep{1, 3}, 3) // ends 4: first free at 7 → 10; second free at 8 → 13
	if at != 10 || w != 3 {
		t.Errorf("fourth: %d, waited %d", at, w)
	}
	if got := q.Free(Link{0, 1}); got != 10 {
		t.Errorf("0→1 free at %d, want 10 (the later of its links)", got)
	}
	for _, c := range []struct {
		lanes map[Dep][]int
		want  string
	}{
		{map[Dep][]int{{0, 2}: {3}}, "want at least 2 times"},
		{map[Dep][]int{{0, 2}: {4, 5}}, "the least time 4 is not the transfer's 3"},
		{map[Dep][]int{{0, 5}: {1, 2}}, "only between blocks on one device each"},
		{map[Dep][]int{{0, 2}: {3, 0}}, "time must be in 1.."},
		{map[Dep][]int{{2, 0}: {3, 4}}, "no such dependency"},
	} {
		p.Lanes = c.lanes
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("lanes %v: %v, want %q", c.lanes, err, c.want)
		}
	}
}
