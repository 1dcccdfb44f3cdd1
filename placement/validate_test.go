package placement

import (
	"strings"
	"testing"
)

// small is a valid two-device chain that the cases below break one way each.
func small() *Placement {
	return &Placement{
		Name:    "small",
		Devices: 2,
		Blocks: []Block{
			{ID: "f0", Kind: Forward, Devices: []int{0}, Time: 1, Memory: 1},
			{ID: "f1", Kind: Forward, Devices: []int{1}, Time: 1, Memory: 1},
			{ID: "b1", Kind: Backward, Devices: []int{1}, Time: 3, Memory: -1},
			{ID: "b0", Kind: Backward, Devices: []int{0}, Time: 3, Memory: -1},
		},
		Deps: []Dep{{0, 1}, {1, 2}, {2, 3}},
	}
}

func TestValidate(t *testing.T) {
	if err := small().Validate(); err != nil {
		t.Fatalf("valid placement: %v", err)
	}
	tests := []struct {
		name string
		edit func(p *Placement)
		want string // the whole message
	}{
		{"no devices", func(p *Placement) { p.Devices = 0 }, `placement "small": devices must be in 1..4096, got 0`},
		{"too many devices", func(p *Placement) { p.Devices = MaxDevices + 1 }, `devices must be in 1..4096, got 4097`},
		{"no blocks", func(p *Placement) { p.Blocks, p.Deps = nil, nil }, `placement "small": no blocks`},
		{"empty id", func(p *Placement) { p.Blocks[2].ID = "" }, `placement "small": block 2: empty id`},
		{"space in id", func(p *Placement) { p.Blocks[2].ID = "b 1" }, `block "b 1": id contains space or control character ' '`},
		{"bad utf8 id", func(p *Placement) { p.Blocks[2].ID = "b\xff" }, `id is not valid UTF-8`},
		{"duplicate id", func(p *Placement) { p.Blocks[3].ID = "f1" }, `placement "small": duplicate id "f1" (blocks 1 and 3)`},
		{"bad kind", func(p *Placement) { p.Blocks[1].Kind = "optimizer" }, `placement "small": block "f1": unknown kind "optimizer" (want one of [forward backward input weight])`},
		{"no block devices", func(p *Placement) { p.Blocks[0].Devices = nil }, `block "f0": no devices`},
		{"device high", func(p *Placement) { p.Blocks[1].Devices = []int{7} }, `placement "small": block "f1": device 7 out of range 0..1`},
		{"device negative", func(p *Placement) { p.Blocks[1].Devices = []int{-1} }, `block "f1": device -1 out of range 0..1`},
		{"device twice", func(p *Placement) { p.Blocks[1].Devices = []int{0, 0} }, `block "f1": device 0 listed twice`},
		{"devices unsorted", func(p *Placement) { p.Blocks[1].Devices = []int{1, 0} }, `block "f1": devices [1 0] not in ascending order`},
		{"time zero", func(p *Placement) { p.Blocks[2].Time = 0 }, `block "b1": time must be in 1..1000000, got 0`},
		{"time huge", func(p *Placement) { p.Blocks[2].Time = MaxTime + 1 }, `block "b1": time must be in 1..1000000, got 1000001`},
		{"memory huge", func(p *Placement) { p.Blocks[2].Memory = -MaxMemory - 1 }, `block "b1": memory -1000000001 out of range`},
		{"dep out of range", func(p *Placement) { p.Deps[1].To = 4 }, `placement "small": dep 1: block index out of range 0..3 in 1 -> 4`},
		{"dep negative", func(p *Placement) { p.Deps[0].From = -1 }, `dep 0: block index out of range 0..3 in -1 -> 1`},
		{"self dep", func(p *Placement) { p.Deps[2] = Dep{2, 2} }, `placement "small": dep 2: "b1" depends on itself`},
		{"duplicate dep", func(p *Placement) { p.Deps = append(p.Deps, Dep{1, 2}) }, `placement "small": dep 3: duplicate dependency f1 -> b1 (also dep 1)`},
		{"cycle of two", func(p *Placement) { p.Deps = append(p.Deps, Dep{2, 1}) }, `placement "small": cycle f1 -> b1 -> f1`},
		{"cycle of all", func(p *Placement) { p.Deps = append(p.Deps, Dep{3, 0}) }, `cycle f0 -> f1 -> b1 -> b0 -> f0`},
		{"cycle starts at lowest index", func(p *Placement) { p.Deps = append(p.Deps, Dep{3, 1}) }, `cycle f1 -> b1 -> b0 -> f1`},
		{"unnamed", func(p *Placement) { p.Name = ""; p.Blocks[0].Time = -2 }, `block "f0": time must be in 1..1000000, got -2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := small()
			tt.edit(p)
			err := p.Validate()
			if err == nil {
				t.Fatalf("Validate passed, want %q", tt.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want it to contain %q", msg, tt.want)
			}
			if p.Name == "" && strings.HasPrefix(msg, "placement") {
				t.Errorf("unnamed placement: error %q names a placement", msg)
			}
		})
	}
}

func TestValidateMultiDeviceBlock(t *testing.T) {
	p := small()
	p.Blocks[0].Devices = []int{0, 1}
	if err := p.Validate(); err != nil {
		t.Fatalf("block on both devices: %v", err)
	}
}

func TestCycleInLaterComponent(t *testing.T) {
	// The cycle is not reachable from block 0: the search must still find it.
	p := small()
	p.Blocks = append(p.Blocks,
		Block{ID: "x", Kind: Forward, Devices: []int{0}, Time: 1},
		Block{ID: "y", Kind: Forward, Devices: []int{1}, Time: 1},
		Block{ID: "z", Kind: Forward, Devices: []int{1}, Time: 1})
	p.Deps = append(p.Deps, Dep{4, 5}, Dep{5, 6}, Dep{6, 5})
	err := p.Validate()
	if err == nil || !strings.HasSuffix(err.Error(), "cycle y -> z -> y") {
		t.Fatalf("got %v, want cycle y -> z -> y", err)
	}
	if _, ok := p.Topo(); ok {
		t.Error("Topo reports no cycle")
	}
}

func TestEqual(t *testing.T) {
	a, b := small(), small()
	if !a.Equal(b) {
		t.Fatal("copies differ")
	}
	if !a.Equal(a.Clone()) {
		t.Fatal("clone differs")
	}
	empty := small()
	empty.Deps = []Dep{}
	nodeps := small()
	nodeps.Deps = nil
	if !empty.Equal(nodeps) {
		t.Error("nil and empty deps differ")
	}
	edits := []func(p *Placement){
		func(p *Placement) { p.Name = "other" },
		func(p *Placement) { p.Devices = 3 },
		func(p *Placement) { p.Blocks[1].ID = "g" },
		func(p *Placement) { p.Blocks[1].Kind = Backward },
		func(p *Placement) { p.Blocks[1].Devices = []int{0} },
		func(p *Placement) { p.Blocks[1].Devices = []int{0, 1} },
		func(p *Placement) { p.Blocks[1].Time = 5 },
		func(p *Placement) { p.Blocks[1].Memory = 5 },
		func(p *Placement) { p.Blocks = p.Blocks[:3]; p.Deps = p.Deps[:2] },
		func(p *Placement) { p.Deps[0], p.Deps[1] = p.Deps[1], p.Deps[0] },
	}
	for n, edit := range edits {
		q := small()
		edit(q)
		if a.Equal(q) || q.Equal(a) {
			t.Errorf("edit %d: still equal", n)
		}
	}
	var nilp *Placement
	if a.Equal(nilp) || !nilp.Equal(nil) {
		t.Error("nil handling")
	}
}
