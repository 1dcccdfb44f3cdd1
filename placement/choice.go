package placement

import (
	"fmt"
	"slices"
	"strings"
)

// # Where as a decision
//
// A block may give Candidates, the device groups it may run on, instead of
// Devices (She et al., "Automatic Operator-level Parallelism Planning for
// Distributed Deep Learning – A Mixed-Integer Programming Approach", §III:
// the assignment x_ij of operators to devices). The search chooses one group
// per block, the same for every micro-batch: a placement, not a
// per-instance dispatch. Choose fixes a choice and returns the pinned
// placement that every other package works on; the candidates stay on it
// (Block.Candidates) so that the verifier can check the choice is one of
// them. A placement with a block still to choose is Open; only the search
// takes one.

// Costs is what each choice of a placement with candidates costs, set by a
// cluster (cluster.Apply): the time of every block on each of its options
// and the transfer time of every dependency between each pair of options.
// A block's options are its Candidates, or its Devices alone when it has
// none (Options).
type Costs struct {
	// Times[i][o] is block i's time on its option o.
	Times [][]int
	// Transfers[d][a][b] is dependency d's transfer time from option a of
	// d.From to option b of d.To (0 on groups that share a device). A
	// dependency missing from it transfers in 0.
	Transfers map[Dep][][]int
}

func (c *Costs) clone() *Costs {
	if c == nil {
		return nil
	}
	q := &Costs{Times: make([][]int, len(c.Times))}
	for i, t := range c.Times {
		q.Times[i] = slices.Clone(t)
	}
	if c.Transfers != nil {
		q.Transfers = make(map[Dep][][]int, len(c.Transfers))
		for d, m := range c.Transfers {
			q.Transfers[d] = cloneGroups(m)
		}
	}
	return q
}

func cloneGroups(g [][]int) [][]int {
	if g == nil {
		return nil
	}
	out := make([][]int, len(g))
	for n, x := range g {
		out[n] = slices.Clone(x)
	}
	return out
}

// Open reports whether some block has candidates and no choice yet
// (Devices nil): such a placement is for the search alone, which chooses
// (Choose) before anything else sees it.
func (p *Placement) Open() bool {
	for _, b := range p.Blocks {
		if len(b.Candidates) > 0 && len(b.Devices) == 0 {
			return true
		}
	}
	return false
}

// HasCandidates reports whether some block has candidates, chosen or not.
func (p *Placement) HasCandidates() bool {
	for _, b := range p.Blocks {
		if len(b.Candidates) > 0 {
			return true
		}
	}
	return false
}

// DeviceOptions is the device groups block i may run on: its Candidates, or
// its Devices alone.
func (p *Placement) DeviceOptions(i int) [][]int {
	if b := p.Blocks[i]; len(b.Candidates) > 0 {
		return b.Candidates
	}
	return [][]int{p.Blocks[i].Devices}
}

// OptionTime is block i's time on its option o (Costs, or Time).
func (p *Placement) OptionTime(i, o int) int {
	if p.Costs != nil && i < len(p.Costs.Times) && o < len(p.Costs.Times[i]) {
		return p.Costs.Times[i][o]
	}
	return p.Blocks[i].Time
}

// OptionTransfer is dependency d's transfer time from option a of d.From
// to option b of d.To: 0 when the groups share a device, else Costs' (0
// without Costs). A block without candidates has option 0 only, with its
// own transfer time (Transfer) when neither end has candidates.
func (p *Placement) OptionTransfer(d Dep, a, b int) int {
	from, to := p.DeviceOptions(d.From)[a], p.DeviceOptions(d.To)[b]
	for _, x := range from {
		if slices.Contains(to, x) {
			return 0
		}
	}
	if p.Costs != nil {
		if m, ok := p.Costs.Transfers[d]; ok {
			return m[a][b]
		}
		return 0
	}
	if len(p.Blocks[d.From].Candidates) == 0 && len(p.Blocks[d.To].Candidates) == 0 {
		return p.Transfers[d]
	}
	return 0
}

// Choice is the option every block runs on: its index in Options. The
// choice of a pinned placement is all 0; that of a chosen one is where
// each block's Devices sit among its Candidates.
func (p *Placement) Choice() []int {
	out := make([]int, len(p.Blocks))
	for i, b := range p.Blocks {
		if len(b.Candidates) == 0 || b.Devices == nil {
			continue
		}
		for o, g := range b.Candidates {
			if slices.Equal(g, b.Devices) {
				out[i] = o
			}
		}
	}
	return out
}

// Reopen returns p with every choice undone: the Devices of the blocks
// with candidates back to nil. Choose(Reopen(p), p.Choice()) is p again
// (on a cluster, times and transfers as Costs give them).
func (p *Placement) Reopen() *Placement {
	q := p.Clone()
	for i := range q.Blocks {
		if len(q.Blocks[i].Candidates) > 0 {
			q.Blocks[i].Devices = nil
		}
	}
	return q
}

// Choose returns p with block i on its option choice[i] (Options): the
// pinned placement every other package works on. Devices are set to the
// chosen group, Candidates are kept, times come from Costs (Time without
// them) and transfers are recomputed for the chosen devices: 0 on a
// shared device, Costs' time otherwise (0 without Costs); Costs stays,
// so that a search may choose again from the result (Reopen). choice has one entry per block, 0 for a block without
// candidates. A chosen block may be chosen again. The error names the
// block whose choice is out of range.
func Choose(p *Placement, choice []int) (*Placement, error) {
	if len(choice) != len(p.Blocks) {
		return nil, p.wrap(fmt.Errorf("choice of %d blocks for %d", len(choice), len(p.Blocks)))
	}
	for i, o := range choice {
		if n := len(p.DeviceOptions(i)); o < 0 || o >= n {
			return nil, p.wrap(fmt.Errorf("%s: choice %d out of range 0..%d", blockName(i, p.Blocks[i].ID), o, n-1))
		}
	}
	q := p.Clone()
	for i, o := range choice {
		b := &q.Blocks[i]
		b.Devices = slices.Clone(p.DeviceOptions(i)[o])
		b.Time = p.OptionTime(i, o)
	}
	q.Transfers = nil
	for _, d := range q.Deps {
		if x := p.OptionTransfer(d, choice[d.From], choice[d.To]); x > 0 {
			if q.Transfers == nil {
				q.Transfers = map[Dep]int{}
			}
			q.Transfers[d] = x
		}
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return q, nil
}

// Assignments is the number of choices of p (the product of every
// block's number of options), capped at limit+1 so that it never
// overflows.
func (p *Placement) Assignments(limit int) int {
	n := 1
	for i := range p.Blocks {
		n *= len(p.DeviceOptions(i))
		if n > limit {
			return limit + 1
		}
	}
	return n
}

// validateCandidates checks a block's candidates: a non-empty list of
// distinct groups, each non-empty, ascending, duplicate-free and in
// 0..devices-1, and Devices, when set, one of them.
func validateCandidates(b Block, devices int) error {
	if len(b.Candidates) == 0 {
		return nil
	}
	for n, g := range b.Candidates {
		if len(g) == 0 {
			return fmt.Errorf("candidates[%d]: empty device group", n)
		}
		for k, d := range g {
			if d < 0 || d >= devices {
				return fmt.Errorf("candidates[%d]: device %d out of range 0..%d", n, d, devices-1)
			}
			if k > 0 && d <= g[k-1] {
				return fmt.Errorf("candidates[%d]: devices %v not ascending and distinct", n, g)
			}
		}
		for m := range n {
			if slices.Equal(b.Candidates[m], g) {
				return fmt.Errorf("candidates[%d]: group %v listed twice", n, g)
			}
		}
	}
	if b.Devices != nil && !slices.ContainsFunc(b.Candidates, func(g []int) bool { return slices.Equal(g, b.Devices) }) {
		return fmt.Errorf("chosen devices %v are not among the candidates %v", b.Devices, b.Candidates)
	}
	return nil
}

func equalGroups(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// validateCosts checks Costs against the blocks and dependencies: a time
// in 1..MaxTime for every option of every block, and a transfer table of
// the options' shape, times in 0..MaxTime, for dependencies only.
func (p *Placement) validateCosts() error {
	c := p.Costs
	if c == nil {
		return nil
	}
	if len(c.Times) != len(p.Blocks) {
		return fmt.Errorf("costs: times of %d blocks for %d", len(c.Times), len(p.Blocks))
	}
	for i, ts := range c.Times {
		if len(ts) != len(p.DeviceOptions(i)) {
			return fmt.Errorf("costs: %s: %d times for %d options", blockName(i, p.Blocks[i].ID), len(ts), len(p.DeviceOptions(i)))
		}
		for _, t := range ts {
			if t < 1 || t > MaxTime {
				return fmt.Errorf("costs: %s: time must be in 1..%d, got %d", blockName(i, p.Blocks[i].ID), MaxTime, t)
			}
		}
	}
	deps := make(map[Dep]bool, len(p.Deps))
	for _, d := range p.Deps {
		deps[d] = true
	}
	for d, m := range c.Transfers {
		if !deps[d] {
			return fmt.Errorf("costs: transfer %d -> %d: no such dependency", d.From, d.To)
		}
		if len(m) != len(p.DeviceOptions(d.From)) {
			return fmt.Errorf("costs: transfer %s -> %s: %d rows for %d options", p.Blocks[d.From].ID, p.Blocks[d.To].ID, len(m), len(p.DeviceOptions(d.From)))
		}
		for _, row := range m {
			if len(row) != len(p.DeviceOptions(d.To)) {
				return fmt.Errorf("costs: transfer %s -> %s: %d columns for %d options", p.Blocks[d.From].ID, p.Blocks[d.To].ID, len(row), len(p.DeviceOptions(d.To)))
			}
			for _, x := range row {
				if x < 0 || x > MaxTime {
					return fmt.Errorf("costs: transfer %s -> %s: time must be in 0..%d, got %d", p.Blocks[d.From].ID, p.Blocks[d.To].ID, MaxTime, x)
				}
			}
		}
	}
	return nil
}

// ChoiceString says, for people, the devices every block with candidates
// runs on, e.g. "a1 [1], a2 [1], out [0 1]" ("" without candidates; "?"
// for a block not chosen yet).
func (p *Placement) ChoiceString() string {
	var parts []string
	for _, b := range p.Blocks {
		if len(b.Candidates) == 0 {
			continue
		}
		if b.Devices == nil {
			parts = append(parts, b.ID+" ?")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %v", b.ID, b.Devices))
	}
	return strings.Join(parts, ", ")
}
