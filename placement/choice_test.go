package placement

import (
	"bytes"
	"strings"
	"testing"
)

// She et al., "Automatic Operator-level Parallelism Planning for
// Distributed Deep Learning – A Mixed-Integer Programming Approach", §III:
// the assignment x_ij is a decision; one choice per block fixes it.
func TestChoose(t *testing.T) {
	p, err := Load(placementsDir + "/where-branches.json")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Open() || !p.HasCandidates() {
		t.Fatal("where-branches is not open")
	}
	if got := p.Assignments(1000); got != 48 {
		t.Errorf("Assignments = %d, want 2^4·3 = 48", got)
	}
	tests := []struct {
		name    string
		choice  []int
		devices [][]int
		err     string
	}{
		{"all on 0", []int{0, 0, 0, 0, 0, 0}, [][]int{{0}, {0}, {0}, {0}, {0}, {0}}, ""},
		{"branches apart", []int{0, 0, 0, 1, 1, 2}, [][]int{{0}, {0}, {0}, {1}, {1}, {0, 1}}, ""},
		{"out of range", []int{0, 0, 0, 0, 0, 3}, nil, `block "out": choice 3 out of range 0..2`},
		{"pinned block", []int{1, 0, 0, 0, 0, 0}, nil, `block "in": choice 1 out of range 0..0`},
		{"short", []int{0}, nil, "choice of 1 blocks for 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Choose(p, tt.choice)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.Open() {
				t.Error("chosen placement still open")
			}
			for i, want := range tt.devices {
				if got := q.Blocks[i].Devices; !equalGroups([][]int{got}, [][]int{want}) {
					t.Errorf("block %d on %v, want %v", i, got, want)
				}
			}
			if got := q.Choice(); !equalGroups([][]int{got}, [][]int{tt.choice}) {
				t.Errorf("Choice = %v, want %v", got, tt.choice)
			}
			// The file records the choice and reads back the same.
			var buf bytes.Buffer
			if err := q.Write(&buf); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), `"chosen": `) {
				t.Errorf("no \"chosen\" in\n%s", buf.String())
			}
			back, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !back.Equal(q) {
				t.Errorf("round trip changed the chosen placement:\n%s", buf.String())
			}
			again, err := Choose(q.Reopen(), q.Choice())
			if err != nil || !again.Equal(q) {
				t.Errorf("Choose(Reopen, Choice) differs (%v)", err)
			}
		})
	}
}

// Without a cluster, no transfer takes time; with Costs, a choice's times
// and transfers are the table's, 0 between groups that share a device.
func TestChooseCosts(t *testing.T) {
	p := &Placement{Devices: 2, Blocks: []Block{
		{ID: "a", Kind: Forward, Candidates: [][]int{{0}, {1}}, Time: 2, Memory: 1},
		{ID: "b", Kind: Forward, Devices: []int{1}, Time: 2, Memory: 1},
	}, Deps: []Dep{{0, 1}}}
	p.Costs = &Costs{Times: [][]int{{2, 4}, {2}}, Transfers: map[Dep][][]int{{0, 1}: {{5}, {5}}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		choice       []int
		time, transf int
	}{
		{[]int{0, 0}, 2, 5},
		{[]int{1, 0}, 4, 0},
	}
	for _, tt := range tests {
		q, err := Choose(p, tt.choice)
		if err != nil {
			t.Fatal(err)
		}
		if q.Blocks[0].Time != tt.time || q.Transfer(Dep{0, 1}) != tt.transf || q.Costs == nil {
			t.Errorf("choice %v: time %d transfer %d, want %d %d", tt.choice, q.Blocks[0].Time, q.Transfer(Dep{0, 1}), tt.time, tt.transf)
		}
	}
	p.Costs.Times[0] = []int{1}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `costs: block "a": 1 times for 2 options`) {
		t.Errorf("bad costs: %v", err)
	}
}
