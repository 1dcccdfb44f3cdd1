package placement

import (
	"bytes"
	"slices"
	"testing"
)

// withTransfers is small() with the given transfer table.
func withTransfers(tr map[Dep]int) *Placement {
	p := small()
	p.Transfers = tr
	return p
}

// The rule itself: Transfer reads the table, except between blocks that
// share a device, and Delay adds the producer's time.
func TestTransferAndDelay(t *testing.T) {
	// small: f0 (device 0, time 1) → f1 (1, 1) → b1 (1, 3) → b0 (0, 3).
	f0f1, f1b1, b1b0 := Dep{0, 1}, Dep{1, 2}, Dep{2, 3}
	group := small()
	group.Blocks[1].Devices = []int{0, 1} // f1 on both devices shares device 0 with f0
	group.Transfers = map[Dep]int{f0f1: 4}
	tests := []struct {
		name      string
		p         *Placement
		dep       Dep
		transfer  int
		wantDelay int
	}{
		{"no table", small(), f0f1, 0, 1},
		{"no table, long producer", small(), b1b0, 0, 3},
		{"cross-device entry", withTransfers(map[Dep]int{f0f1: 2}), f0f1, 2, 3},
		{"cross-device entry after a long block", withTransfers(map[Dep]int{b1b0: 5}), b1b0, 5, 8},
		{"dependency not in the table", withTransfers(map[Dep]int{f0f1: 2}), b1b0, 0, 3},
		{"zero entry", withTransfers(map[Dep]int{f0f1: 0}), f0f1, 0, 1},
		{"same device: no tensor moves", withTransfers(map[Dep]int{f1b1: 7}), f1b1, 0, 1},
		{"groups sharing a device", group, f0f1, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Transfer(tc.dep); got != tc.transfer {
				t.Errorf("Transfer(%v) = %d, want %d", tc.dep, got, tc.transfer)
			}
			if got := tc.p.Delay(tc.dep); got != tc.wantDelay {
				t.Errorf("Delay(%v) = %d, want %d", tc.dep, got, tc.wantDelay)
			}
		})
	}
}

// Heads, Tails and the critical path follow the rule: worked out by hand.
func TestHeadsTailsWithTransfers(t *testing.T) {
	// diamond: a (device 0, time 1) forks into b (device 1, time 3) and
	// c (device 2, time 1), which join into d (device 0, time 1).
	diamond := func(tr map[Dep]int) *Placement {
		return &Placement{
			Name: "diamond", Devices: 3,
			Blocks: []Block{
				{ID: "a", Kind: Forward, Devices: []int{0}, Time: 1},
				{ID: "b", Kind: Forward, Devices: []int{1}, Time: 3},
				{ID: "c", Kind: Forward, Devices: []int{2}, Time: 1},
				{ID: "d", Kind: Forward, Devices: []int{0}, Time: 1},
			},
			Deps:   []Dep{{0, 1}, {0, 2}, {1, 3}, {2, 3}},
			Timing: Timing{Transfers: tr},
		}
	}
	tests := []struct {
		name        string
		p           *Placement
		heads, tail []int
		cp          int
	}{
		{"chain without transfers", small(), []int{0, 1, 2, 5}, []int{7, 6, 3, 0}, 8},
		{"chain with transfers", withTransfers(map[Dep]int{{0, 1}: 2, {2, 3}: 5}), []int{0, 3, 4, 12}, []int{14, 11, 8, 0}, 15},
		{"diamond without transfers", diamond(nil), []int{0, 1, 1, 4}, []int{4, 1, 1, 0}, 5},
		// A transfer of 4 on a → c makes the short branch the critical one.
		{"diamond, slow short branch", diamond(map[Dep]int{{0, 2}: 4}), []int{0, 1, 5, 6}, []int{6, 1, 1, 0}, 7},
		{"diamond, transfers on both joins", diamond(map[Dep]int{{1, 3}: 1, {2, 3}: 2}), []int{0, 1, 1, 5}, []int{5, 2, 3, 0}, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := tc.p.Heads(); !slices.Equal(got, tc.heads) {
				t.Errorf("Heads = %v, want %v", got, tc.heads)
			}
			if got := tc.p.Tails(); !slices.Equal(got, tc.tail) {
				t.Errorf("Tails = %v, want %v", got, tc.tail)
			}
			if got := tc.p.CriticalPath(); got != tc.cp {
				t.Errorf("CriticalPath = %d, want %d", got, tc.cp)
			}
		})
	}
}

func TestPredSuccDeps(t *testing.T) {
	p := &Placement{
		Devices: 1,
		Blocks:  []Block{{ID: "a"}, {ID: "b"}, {ID: "c"}},
		Deps:    []Dep{{0, 2}, {1, 2}, {0, 1}},
	}
	in, out := p.PredDeps(), p.SuccDeps()
	wantIn := [][]Dep{nil, {{0, 1}}, {{0, 2}, {1, 2}}}
	wantOut := [][]Dep{{{0, 2}, {0, 1}}, {{1, 2}}, nil}
	for i := range p.Blocks {
		if !slices.Equal(in[i], wantIn[i]) || !slices.Equal(out[i], wantOut[i]) {
			t.Errorf("block %d: PredDeps %v SuccDeps %v, want %v and %v", i, in[i], out[i], wantIn[i], wantOut[i])
		}
	}
}

func TestValidateTransfers(t *testing.T) {
	tests := []struct {
		name string
		tr   map[Dep]int
		want string // the whole message, "" when valid
	}{
		{"nil", nil, ""},
		{"empty", map[Dep]int{}, ""},
		{"cross-device", map[Dep]int{{0, 1}: 3, {2, 3}: MaxTime}, ""},
		{"zero on a shared device", map[Dep]int{{1, 2}: 0}, ""},
		{"negative", map[Dep]int{{0, 1}: -1}, `placement "small": dep 0: transfer f0 -> f1: time must be in 0..1000000, got -1`},
		{"too long", map[Dep]int{{2, 3}: MaxTime + 1}, `placement "small": dep 2: transfer b1 -> b0: time must be in 0..1000000, got 1000001`},
		{"shared device", map[Dep]int{{1, 2}: 2}, `placement "small": dep 1: transfer f1 -> b1: time 2 between blocks that share a device (must be 0)`},
		{"no such dependency", map[Dep]int{{3, 0}: 1, {1, 0}: 1, {0, 1}: 1}, `placement "small": transfer 1 -> 0: no such dependency`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := withTransfers(tc.tr).Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v, want %s", err, tc.want)
			}
		})
	}
}

// The table is part of the model (Clone, Equal) but not of the file.
func TestTransfersCloneEqualFile(t *testing.T) {
	p := withTransfers(map[Dep]int{{0, 1}: 2})
	q := p.Clone()
	if !p.Equal(q) || q.Transfer(Dep{0, 1}) != 2 {
		t.Fatalf("clone lost the table: %v", q.Transfers)
	}
	q.Transfers[Dep{0, 1}] = 3
	if p.Transfer(Dep{0, 1}) != 2 {
		t.Error("the clone shares its table with the original")
	}
	if p.Equal(q) || p.Equal(small()) || small().Equal(p) {
		t.Error("placements with different transfer times are equal")
	}
	if !small().Equal(withTransfers(map[Dep]int{{0, 1}: 0})) {
		t.Error("a transfer of 0 differs from no table")
	}
	if small().Clone().Transfers != nil {
		t.Error("cloning no table made one")
	}
	a, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	b, err := small().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("the placement file carries the transfer table:\n%s\nwant\n%s", a, b)
	}
}
