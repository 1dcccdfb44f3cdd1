package placement

import (
	"fmt"
	"testing"
)

// kindRole is the role a kind names.
var kindRole = map[Kind]Role{Forward: RoleForward, Backward: RoleBackward, Input: RoleInput, Weight: RoleWeight}

// TestRolesAgreeWithKinds: on every built-in placement — split or not,
// chunked in loop and V order, for inference — the roles read from the
// graph are the roles the kinds name, so that code that reads roles
// schedules every built-in exactly as it did when it read kinds.
func TestRolesAgreeWithKinds(t *testing.T) {
	for _, name := range BuiltinNames() {
		for _, d := range []int{1, 2, 4, 8} {
			for _, opt := range []Options{
				{Devices: d}, {Devices: d, SplitBackward: true}, {Devices: d, Inference: true},
				{Devices: d, Chunks: 2, Order: Loop}, {Devices: d, Chunks: 2, Order: V},
				{Devices: d, Chunks: 3, Order: V, SplitBackward: true}, {Devices: d, Chunks: 2, Order: Loop, SplitBackward: true},
			} {
				p, err := Builtin(name, opt)
				if err != nil {
					continue // the shape does not take these options
				}
				roles := p.Roles()
				for i, b := range p.Blocks {
					if roles[i] != kindRole[b.Kind] {
						t.Errorf("%s %+v: block %s (%s) has role %s", p.Name, opt, b.ID, b.Kind, roles[i])
					}
				}
			}
		}
	}
}

// TestRolesIgnoreNames: the zero-bubble split written with `backward`
// blocks only (the input and weight gradients of Qi et al., "Zero Bubble
// Pipeline Parallelism", §2, both called backward) has the same roles.
func TestRolesIgnoreNames(t *testing.T) {
	for _, opt := range []Options{{Devices: 4, SplitBackward: true}, {Devices: 4, SplitBackward: true, Chunks: 2, Order: V}} {
		p, err := Builtin("v-shape", opt)
		if err != nil {
			t.Fatal(err)
		}
		q := p.Clone()
		for i := range q.Blocks {
			if q.Blocks[i].Kind != Forward {
				q.Blocks[i].Kind = Backward
			}
		}
		want, got := fmt.Sprint(p.Roles()), fmt.Sprint(q.Roles())
		if got != want {
			t.Errorf("%s written with backward blocks: roles %s, want %s", p.Name, got, want)
		}
		if !q.HasDeferrable() {
			t.Errorf("%s written with backward blocks: no deferrable block", p.Name)
		}
	}
}

// TestRolesDeferrable pins the rule for a deferrable block: nothing waits
// for it, it allocates nothing, and its inputs are gradients on its own
// devices. The last backward of a 1F1B chain frees memory and nothing
// waits for it, but it follows a gradient on another device: it is the
// end of the chain, not a weight gradient.
func TestRolesDeferrable(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Roles()[p.Index("b0")]; r != RoleBackward {
		t.Errorf("b0 of the v-shape has role %s, want backward", r)
	}
	if p.HasDeferrable() {
		t.Error("the unsplit v-shape has a deferrable block")
	}
}

// TestRolesFreeingInput: the zero-bubble repository's memory model frees
// a forward's activation in two parts (forward +2, input gradient −1,
// weight gradient −1). Its weight gradients are deferrable all the same,
// the first stage's too (its input gradient ends the chain); in a chain
// of layers on one device, whose last backward follows one that frees
// and leads nowhere else, nothing is.
func TestRolesFreeingInput(t *testing.T) {
	for _, opt := range []Options{{Devices: 4, SplitBackward: true}, {Devices: 4, SplitBackward: true, Chunks: 2, Order: V}} {
		p, err := Builtin("v-shape", opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.Blocks {
			p.Blocks[i].Memory = map[Kind]int{Forward: 2, Input: -1, Weight: -1}[p.Blocks[i].Kind]
		}
		roles := p.Roles()
		for i, b := range p.Blocks {
			if roles[i] != kindRole[b.Kind] {
				t.Errorf("%s, input gradients freeing: block %s (%s) has role %s", p.Name, b.ID, b.Kind, roles[i])
			}
		}
	}
	chain := &Placement{Name: "layers", Devices: 1, Blocks: []Block{
		{ID: "f0", Kind: Forward, Devices: []int{0}, Time: 1, Memory: 1},
		{ID: "f1", Kind: Forward, Devices: []int{0}, Time: 1, Memory: 1},
		{ID: "b1", Kind: Backward, Devices: []int{0}, Time: 2, Memory: -1},
		{ID: "b0", Kind: Backward, Devices: []int{0}, Time: 2, Memory: -1},
	}, Deps: []Dep{{From: 0, To: 1}, {From: 1, To: 2}, {From: 2, To: 3}}}
	if chain.HasDeferrable() {
		t.Errorf("a chain of layers on one device has a deferrable block: %v", chain.Roles())
	}
}
