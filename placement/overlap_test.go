package placement

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParseOverlapTime(t *testing.T) {
	tests := []struct {
		in   string
		want Overlap
		err  string
	}{
		{"3", Overlap{Time: 3}, ""},
		{"0.7x", Overlap{Factor: 0.7}, ""},
		{"1x", Overlap{Factor: 1}, ""},
		{"0", Overlap{}, "want a time ≥ 1"},
		{"-2", Overlap{}, "want a time ≥ 1"},
		{"x", Overlap{}, "factor of F + B"},
		{"0x", Overlap{}, "factor of F + B"},
		{"NaNx", Overlap{}, "factor of F + B"},
		{"fast", Overlap{}, "want a time ≥ 1"},
	}
	for _, tt := range tests {
		o, err := ParseOverlapTime(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseOverlapTime(%q) = %v, %v; want error %q", tt.in, o, err, tt.err)
		case tt.err == "" && (err != nil || !overlapEqual(o, &tt.want)):
			t.Errorf("ParseOverlapTime(%q) = %+v, %v; want %+v", tt.in, o, err, tt.want)
		}
	}
}

// TestOverlapGroup pins the rule: a forward and a whole backward (a
// backward block, or an input block with its weight block) on the same
// devices, their time from the pair's entry, the time, or the factor of
// F + B rounded up.
func TestOverlapGroup(t *testing.T) {
	split, err := Builtin("v-shape", Options{Devices: 4, SplitBackward: true, Chunks: 2, Order: V})
	if err != nil {
		t.Fatal(err)
	}
	id := map[string]int{}
	for i, b := range split.Blocks {
		id[b.ID] = i
	}
	roles := split.Roles()
	if _, _, why := split.OverlapGroup(id["f0"], id["i7"], roles); !strings.Contains(why, "overlaps nothing") {
		t.Errorf("without a rule: %q", why)
	}
	split.Overlap = &Overlap{Factor: 0.7}
	blocks, tm, why := split.OverlapGroup(id["f0"], id["i7"], roles)
	if why != "" || len(blocks) != 3 || blocks[2] != id["w7"] || tm != 3 { // ⌈0.7·3⌉
		t.Errorf("f0 with i7: %v, %d, %q; want [f0 i7 w7], 3", blocks, tm, why)
	}
	for _, c := range []struct{ f, g, why string }{
		{"f0", "i6", "different devices"},
		{"i7", "f0", "not a forward"},
		{"f0", "w7", "not a backward or an input gradient"},
		{"f0", "f7", "not a backward or an input gradient"},
	} {
		if _, _, why := split.OverlapGroup(id[c.f], id[c.g], roles); !strings.Contains(why, c.why) {
			t.Errorf("%s with %s: %q, want %q", c.f, c.g, why, c.why)
		}
	}
	p, err := Load("testdata/overlap.json")
	if err != nil {
		t.Fatal(err)
	}
	roles = p.Roles()
	if _, tm, _ := p.OverlapGroup(1, 2, roles); tm != 5 {
		t.Errorf("f1 with b1: time %d, want the pair's 5", tm)
	}
	if _, tm, _ := p.OverlapGroup(0, 3, roles); tm != 5 { // ⌈0.75·6⌉ = 5
		t.Errorf("f0 with b0: time %d, want 5", tm)
	}
}

func TestOverlapFileRoundTrip(t *testing.T) {
	data, err := os.ReadFile("testdata/overlap.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(data) {
		t.Errorf("written:\n%s\nwant:\n%s", b.String(), data)
	}
	if q := p.Clone(); !q.Equal(p) {
		t.Error("a clone differs")
	}
	q := p.Clone()
	q.Overlap.Factor = 0.5
	if q.Equal(p) || p.Overlap.Factor != 0.75 {
		t.Error("a changed clone still equal, or the change reached the original")
	}
}

// WithOverlap puts a rule on a copy, keeping the file's own pairs, and
// leaves the original alone.
func TestWithOverlap(t *testing.T) {
	data, err := os.ReadFile("testdata/overlap.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.WithOverlap(&Overlap{Time: 3})
	if err != nil {
		t.Fatal(err)
	}
	if q.Overlap.Time != 3 || len(q.Overlap.Pairs) != len(p.Overlap.Pairs) || p.Overlap.Time == 3 {
		t.Errorf("overlap %+v of %+v", q.Overlap, p.Overlap)
	}
}

// TestOverlapGroups: the list of every allowed group is OverlapGroup's,
// pair by pair.
func TestOverlapGroups(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 4, SplitBackward: true, Chunks: 2, Order: V})
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := p.OverlapGroups(); g != nil {
		t.Errorf("groups without a rule: %v", g)
	}
	p.Overlap = &Overlap{Factor: 0.5, Pairs: []OverlapPair{{Forward: 0, Backward: 8, Time: 2}}}
	roles := p.Roles()
	groups, times := p.OverlapGroups()
	want := 0
	for f := range p.Blocks {
		for g := range p.Blocks {
			blocks, tm, why := p.OverlapGroup(f, g, roles)
			if why != "" {
				continue
			}
			if want >= len(groups) || !slices.Equal(groups[want], blocks) || times[want] != tm {
				t.Fatalf("group %d: OverlapGroups %v, OverlapGroup(%d, %d) = %v, %d", want, groups, f, g, blocks, tm)
			}
			want++
		}
	}
	if want != len(groups) || want != 16 { // two stages per device, each forward with either whole backward
		t.Errorf("%d groups, OverlapGroup allows %d", len(groups), want)
	}
}
