package placement

import "slices"

// Role is what a block does for a schedule, read from the graph: where it
// sits in the dependencies and what it does to memory. The priority rules
// of the constructions, the baselines' recognition of a pipeline and the
// bounds ask Roles, never a block's Kind, so that one graph with the same
// times and memory is scheduled alike whatever its kinds are called (a
// split backward written as two `backward` blocks is the zero-bubble split
// all the same).
//
// The kind still matters where a block's meaning leaves the schedule:
// rendering (letters, colours), the runtime and its workers (which autograd
// call a block is: Pairs), and the exports (PyTorch's F, B, I and W
// actions, the partitioner's block names).
type Role int

const (
	// RoleForward runs in the forward pass: nothing of the backward pass
	// comes before it.
	RoleForward Role = iota
	// RoleBackward is a gradient that the rest of the backward pass waits
	// for (or ends it) and that finishes its work alone: a whole backward.
	RoleBackward
	// RoleInput is a gradient that the rest of the backward pass waits
	// for, whose work a deferrable block on its devices finishes later:
	// the input gradient of the zero-bubble split ("B" of Qi et al., "I"
	// of PyTorch).
	RoleInput
	// RoleWeight is a deferrable gradient: nothing waits for it, it
	// allocates no memory, and it only finishes what gradients on its own
	// devices began (gradients that freed nothing themselves). It can run late and fill bubbles: the weight gradient
	// of the zero-bubble split ("W").
	RoleWeight
)

func (r Role) String() string {
	switch r {
	case RoleForward:
		return "forward"
	case RoleBackward:
		return "backward"
	case RoleInput:
		return "input"
	case RoleWeight:
		return "weight"
	}
	return "role(?)"
}

// Gradient reports whether r belongs to the backward pass.
func (r Role) Gradient() bool { return r != RoleForward }

// Waited reports whether r is a gradient the backward pass waits for
// (RoleBackward or RoleInput): the zero-bubble rule runs these first.
func (r Role) Waited() bool { return r == RoleBackward || r == RoleInput }

// Roles returns the role of every block, derived from the graph:
//
//   - The pass. Memory signs say it where they speak: a block that
//     allocates (memory > 0), or that runs before one that does, is in the
//     forward pass; a block that frees (memory < 0), or that runs after
//     one that does, is in the backward pass. Between the last allocation
//     and the first free (a block of memory 0 there: the first input
//     gradient of a split, a shard's backward) and in a placement without
//     memory (inference), the graph cannot tell a forward from a gradient,
//     and the kind decides.
//   - Among gradients (on the dependencies no path implies,
//     ReducedDeps), a block is deferrable (RoleWeight) when no block
//     depends on it, it allocates nothing, and every block it depends on
//     is a gradient on exactly its devices that frees nothing or that the
//     backward pass goes on from elsewhere too: it finishes a gradient its
//     device began (and frees what that one kept), and nothing waits for
//     it. Whatever its kind says. The last backward of a chain on one
//     device is not one: the gradient before it freed its own memory and
//     leads nowhere else, so it is a stage of the chain, not the rest of a
//     gradient — unless the placement's other leaves show a split whose
//     input gradients free part of the activation (F +2, I −1, W −1, the
//     zero-bubble repository's accounting), where it is the first stage's
//     weight gradient.
//   - A gradient with a deferrable block after it on its devices is
//     RoleInput, any other gradient RoleBackward.
//
// On every built-in placement (split or not, chunked or not) the roles
// are the kinds' own; see the tests. The placement must be acyclic.
func (p *Placement) Roles() []Role {
	k := len(p.Blocks)
	order, _ := p.Topo()
	// A dependency that a path already implies says nothing about a role
	// (a forward listed before its own input gradient's weight block).
	g := p.Skeleton()
	preds, succs := g.Preds(), g.Succs()
	// allocBelow[i]: some block at or after i allocates; freeAbove[i]: some
	// block at or before i frees.
	allocBelow := make([]bool, k)
	freeAbove := make([]bool, k)
	for _, i := range order {
		freeAbove[i] = p.Blocks[i].Memory < 0
		for _, j := range preds[i] {
			freeAbove[i] = freeAbove[i] || freeAbove[j]
		}
	}
	for x := len(order) - 1; x >= 0; x-- {
		i := order[x]
		allocBelow[i] = p.Blocks[i].Memory > 0
		for _, j := range succs[i] {
			allocBelow[i] = allocBelow[i] || allocBelow[j]
		}
	}
	grad := make([]bool, k)
	for i, b := range p.Blocks {
		switch {
		case allocBelow[i] && !freeAbove[i]:
			grad[i] = false
		case freeAbove[i] && !allocBelow[i]:
			grad[i] = true
		default:
			grad[i] = kindInfo(b.Kind).Gradient
		}
	}
	roles := make([]Role, k)
	for i := range p.Blocks {
		if grad[i] {
			roles[i] = RoleBackward
		}
	}
	// A leaf after a gradient that frees memory is deferrable where that
	// gradient goes on elsewhere too (it branches: the input gradient of
	// a split whose activation is freed in two parts, F +2, I −1, W −1);
	// at the end of the chain (no branch) only where some other leaf is
	// deferrable that way: the first stage's weight gradient of such a
	// split, not the last backward of a chain of layers.
	var ends []int
	freeingSplit := false
	for i, b := range p.Blocks {
		if !grad[i] || len(succs[i]) > 0 || len(preds[i]) == 0 || b.Memory > 0 {
			continue
		}
		deferrable, end, branch := true, false, false
		for _, j := range preds[i] {
			if !grad[j] || !slices.Equal(p.Blocks[j].Devices, b.Devices) {
				deferrable = false
				break
			}
			if p.Blocks[j].Memory >= 0 {
				continue
			}
			if branches(j, i, succs[j], grad) {
				branch = true
			} else {
				end = true
			}
		}
		switch {
		case !deferrable:
		case end:
			ends = append(ends, i)
		default:
			roles[i] = RoleWeight
			freeingSplit = freeingSplit || branch
		}
	}
	if freeingSplit {
		for _, i := range ends {
			roles[i] = RoleWeight
		}
	}
	for i := range p.Blocks {
		if roles[i] != RoleWeight {
			continue
		}
		for _, j := range preds[i] {
			if roles[j] == RoleBackward {
				roles[j] = RoleInput
			}
		}
	}
	return roles
}

// HasDeferrable reports whether some block of p is deferrable (RoleWeight):
// the placement's backward is split the zero-bubble way, whatever its kinds
// are called.
func (p *Placement) HasDeferrable() bool {
	for _, r := range p.Roles() {
		if r == RoleWeight {
			return true
		}
	}
	return false
}

// branches reports whether gradient j, a predecessor of leaf i, has a
// gradient successor other than i: the backward pass goes on from j.
func branches(j, i int, succs []int, grad []bool) bool {
	for _, k := range succs {
		if k != i && grad[k] {
			return true
		}
	}
	return false
}
