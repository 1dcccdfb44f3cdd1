package placement

import (
	"cmp"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/tessel-pp/tessel/limits"
)

// Limits that keep every sum over a placement (loads, critical paths,
// memory) far from overflow and every per-device slice small. They are far
// beyond what a solver can schedule; package limits states them all.
const (
	MaxDevices = limits.Devices
	MaxBlocks  = limits.Blocks
	MaxTime    = limits.Time
	MaxMemory  = limits.Memory // bound on |memory| of one block
	MaxSize    = 1e12          // bound on the size of a dependency's tensor
)

// Validate checks the invariants every other package relies on: at least one
// device and one block; unique, non-empty, printable ids; a kind from
// Kinds; a non-empty, ascending, duplicate-free device list inside
// 0..Devices-1; 1 ≤ time ≤ MaxTime; |memory| ≤ MaxMemory; dependencies
// between existing, distinct blocks, each listed once, without a cycle.
// The error is one line and names the offending block, device or
// dependency, e.g. `placement "v-shape": block "f3": device 7 out of range
// 0..3`. Transfers, when set, must name existing dependencies, lie in
// 0..MaxTime and be 0 between blocks that share a device.
func (p *Placement) Validate() error {
	if err := p.validate(); err != nil {
		return p.wrap(err)
	}
	return nil
}

// wrap prefixes err with the placement's name when it has one.
func (p *Placement) wrap(err error) error {
	if p.Name == "" {
		return err
	}
	return fmt.Errorf("placement %q: %w", p.Name, err)
}

func (p *Placement) validate() error {
	if !utf8.ValidString(p.Name) {
		return fmt.Errorf("name %q is not valid UTF-8", p.Name)
	}
	if err := limits.CheckName("placement name", p.Name); err != nil {
		return err
	}
	if p.Devices < 1 || p.Devices > MaxDevices {
		return fmt.Errorf("devices must be in 1..%d, got %d", MaxDevices, p.Devices)
	}
	if err := p.Units.Validate(); err != nil {
		return err
	}
	if len(p.Blocks) == 0 {
		return fmt.Errorf("no blocks")
	}
	if err := limits.Check("blocks", len(p.Blocks), MaxBlocks); err != nil {
		return err
	}
	seen := make(map[string]int, len(p.Blocks))
	for i, b := range p.Blocks {
		if err := p.validateBlock(b); err != nil {
			return fmt.Errorf("%s: %w", blockName(i, b.ID), err)
		}
		if j, dup := seen[b.ID]; dup {
			return fmt.Errorf("duplicate id %q (blocks %d and %d)", b.ID, j, i)
		}
		seen[b.ID] = i
	}
	k := len(p.Blocks)
	deps := make(map[Dep]int, len(p.Deps))
	for n, d := range p.Deps {
		if d.From < 0 || d.From >= k || d.To < 0 || d.To >= k {
			return fmt.Errorf("dep %d: block index out of range 0..%d in %d -> %d", n, k-1, d.From, d.To)
		}
		if d.From == d.To {
			return fmt.Errorf("dep %d: %q depends on itself", n, p.Blocks[d.From].ID)
		}
		if m, dup := deps[d]; dup {
			return fmt.Errorf("dep %d: duplicate dependency %s -> %s (also dep %d)", n, p.Blocks[d.From].ID, p.Blocks[d.To].ID, m)
		}
		deps[d] = n
	}
	if cyc := p.cycle(); cyc != nil {
		s := "cycle "
		for _, i := range cyc {
			s += p.Blocks[i].ID + " -> "
		}
		return fmt.Errorf("%s%s", s, p.Blocks[cyc[0]].ID)
	}
	if err := p.validateSizes(deps); err != nil {
		return err
	}
	if p.Capacities != nil && len(p.Capacities) != p.Devices {
		return fmt.Errorf("capacities of %d devices, want %d", len(p.Capacities), p.Devices)
	}
	for d, c := range p.Capacities {
		if c < 0 || c > MaxMemory {
			return fmt.Errorf("device %d: capacity %d out of range 0..%d", d, c, MaxMemory)
		}
	}
	if err := p.validateSavings(); err != nil {
		return err
	}
	if err := p.validateCosts(); err != nil {
		return err
	}
	if err := p.validateOverlap(); err != nil {
		return err
	}
	return p.validateTransfers(deps)
}

// validateSizes checks that every size names a dependency and lies in
// 0..MaxSize, in the order of Deps, then the unknown ones in order.
func (p *Placement) validateSizes(deps map[Dep]int) error {
	if len(p.Sizes) == 0 {
		return nil
	}
	for n, d := range p.Deps {
		z, ok := p.Sizes[d]
		if ok && !(z >= 0 && z <= MaxSize) { // NaN fails too
			return fmt.Errorf("dep %d: %s -> %s: size must be in 0..%g, got %g", n, p.Blocks[d.From].ID, p.Blocks[d.To].ID, float64(MaxSize), z)
		}
	}
	if d, ok := firstUnknown(p.Sizes, deps); ok {
		return fmt.Errorf("size of %d -> %d: no such dependency", d.From, d.To)
	}
	return nil
}

// firstUnknown returns the least key of table (by From, then To) that is
// not a dependency, so that errors about such keys are deterministic.
func firstUnknown[V any](table map[Dep]V, deps map[Dep]int) (Dep, bool) {
	var unknown []Dep
	for d := range table {
		if _, ok := deps[d]; !ok {
			unknown = append(unknown, d)
		}
	}
	if len(unknown) == 0 {
		return Dep{}, false
	}
	return slices.MinFunc(unknown, func(a, b Dep) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) }), true
}

// validateTransfers checks the transfer table against the dependencies
// (deps maps each to its position): every entry names a dependency, lies
// in 0..MaxTime, and is 0 between blocks that share a device, where no
// tensor moves. Entries are checked in the order of Deps, then the
// unknown ones in order, so that the error is deterministic.
func (p *Placement) validateTransfers(deps map[Dep]int) error {
	if len(p.Transfers) == 0 {
		return p.validateLanes(deps)
	}
	for n, d := range p.Deps {
		c, ok := p.Transfers[d]
		if !ok {
			continue
		}
		name := fmt.Sprintf("dep %d: transfer %s -> %s", n, p.Blocks[d.From].ID, p.Blocks[d.To].ID)
		if c < 0 || c > MaxTime {
			return fmt.Errorf("%s: time must be in 0..%d, got %d", name, MaxTime, c)
		}
		if c != 0 && p.Shares(d.From, d.To) {
			return fmt.Errorf("%s: time %d between blocks that share a device (must be 0)", name, c)
		}
	}
	if d, ok := firstUnknown(p.Transfers, deps); ok {
		return fmt.Errorf("transfer %d -> %d: no such dependency", d.From, d.To)
	}
	return p.validateLanes(deps)
}

// validateLanes checks Lanes: every entry names a dependency between
// blocks on one device each, on different devices, with at least two
// times in 1..MaxTime whose least is its Transfer.
func (p *Placement) validateLanes(deps map[Dep]int) error {
	for n, d := range p.Deps {
		ts, ok := p.Lanes[d]
		if !ok {
			continue
		}
		name := fmt.Sprintf("dep %d: links of %s -> %s", n, p.Blocks[d.From].ID, p.Blocks[d.To].ID)
		if len(p.Blocks[d.From].Devices) != 1 || len(p.Blocks[d.To].Devices) != 1 || p.Shares(d.From, d.To) {
			return fmt.Errorf("%s: only between blocks on one device each, on different devices", name)
		}
		if len(ts) < 2 {
			return fmt.Errorf("%s: want at least 2 times, got %d", name, len(ts))
		}
		for _, t := range ts {
			if t < 1 || t > MaxTime {
				return fmt.Errorf("%s: time must be in 1..%d, got %d", name, MaxTime, t)
			}
		}
		if slices.Min(ts) != p.Transfer(d) {
			return fmt.Errorf("%s: the least time %d is not the transfer's %d", name, slices.Min(ts), p.Transfer(d))
		}
	}
	if d, ok := firstUnknown(p.Lanes, deps); ok {
		return fmt.Errorf("links of %d -> %d: no such dependency", d.From, d.To)
	}
	return nil
}

func blockName(i int, id string) string {
	if id == "" {
		return fmt.Sprintf("block %d", i)
	}
	return fmt.Sprintf("block %q", id)
}

func (p *Placement) validateBlock(b Block) error {
	if b.ID == "" {
		return fmt.Errorf("empty id")
	}
	// Ids appear in tables, renderings and error messages: keep them on one
	// line and readable.
	if !utf8.ValidString(b.ID) {
		return fmt.Errorf("id is not valid UTF-8")
	}
	if err := limits.CheckName("id", b.ID); err != nil {
		return err
	}
	for _, r := range b.ID {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			return fmt.Errorf("id contains space or control character %q", r)
		}
	}
	if !validKind(b.Kind) {
		return fmt.Errorf("unknown kind %q (want one of %v)", b.Kind, Kinds())
	}
	if err := validateCandidates(b, p.Devices); err != nil {
		return err
	}
	if len(b.Devices) == 0 && len(b.Candidates) == 0 {
		return fmt.Errorf("no devices")
	}
	for n, d := range b.Devices {
		if d < 0 || d >= p.Devices {
			return fmt.Errorf("device %d out of range 0..%d", d, p.Devices-1)
		}
		if n > 0 && d == b.Devices[n-1] {
			return fmt.Errorf("device %d listed twice", d)
		}
		if n > 0 && d < b.Devices[n-1] {
			return fmt.Errorf("devices %v not in ascending order", b.Devices)
		}
	}
	if b.Time < 1 || b.Time > MaxTime {
		return fmt.Errorf("time must be in 1..%d, got %d", MaxTime, b.Time)
	}
	if b.Memory < -MaxMemory || b.Memory > MaxMemory {
		return fmt.Errorf("memory %d out of range -%d..%d", b.Memory, MaxMemory, MaxMemory)
	}
	return nil
}

func validKind(k Kind) bool {
	_, ok := k.Info()
	return ok
}

// cycle returns the block indices of one dependency cycle in dependency
// order, starting at its lowest index, or nil when there is none. The
// choice is deterministic: depth-first from the lowest index, successors in
// Deps order. Dep indices must be in range.
func (p *Placement) cycle() []int {
	const (
		white = iota
		grey
		black
	)
	succs := p.Succs()
	color := make([]int, len(p.Blocks))
	var stack []int
	var found []int
	var visit func(i int) bool
	visit = func(i int) bool {
		color[i] = grey
		stack = append(stack, i)
		for _, j := range succs[i] {
			switch color[j] {
			case grey:
				for n := len(stack) - 1; n >= 0; n-- {
					if stack[n] == j {
						found = append([]int(nil), stack[n:]...)
						break
					}
				}
				return true
			case white:
				if visit(j) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return false
	}
	for i := range p.Blocks {
		if color[i] == white && visit(i) {
			break
		}
	}
	if found == nil {
		return nil
	}
	low := 0
	for n, i := range found {
		if i < found[low] {
			low = n
		}
	}
	return append(found[low:], found[:low]...)
}

// Equal reports whether p and q describe the same placement: same name,
// devices, blocks in the same order, dependencies in the same order and
// the same size on each, and timed alike (timedAlike: the same
// transfers, capacities, link queues and host channels). A nil and an
// empty list are equal, and so are a missing size and a size of 1.
func (p *Placement) Equal(q *Placement) bool {
	if p == nil || q == nil {
		return p == q
	}
	if p.Name != q.Name || p.Devices != q.Devices || len(p.Blocks) != len(q.Blocks) || len(p.Deps) != len(q.Deps) {
		return false
	}
	for i, a := range p.Blocks {
		b := q.Blocks[i]
		if a.ID != b.ID || a.Kind != b.Kind || a.Time != b.Time || a.Memory != b.Memory || len(a.Devices) != len(b.Devices) || !equalGroups(a.Candidates, b.Candidates) ||
			a.Offload != b.Offload || a.Activation != b.Activation || a.Recompute != b.Recompute || a.Checkpoint != b.Checkpoint || a.RecomputedLayers != b.RecomputedLayers {
			return false
		}
		for n := range a.Devices {
			if a.Devices[n] != b.Devices[n] {
				return false
			}
		}
	}
	for n, d := range p.Deps {
		if d != q.Deps[n] || p.Size(d) != q.Size(d) {
			return false
		}
	}
	return p.timedAlike(q) && overlapEqual(p.Overlap, q.Overlap) && p.Units.Equal(q.Units)
}
