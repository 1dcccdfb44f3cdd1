package placement

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/strictjson"
)

// Overlap is the rule of overlapped forward and backward (DeepSeek's
// DualPipe and DualPipeV, PyTorch's OVERLAP_F_B; mixture-of-experts models
// that hide one micro-batch's all-to-all behind another's compute): a
// schedule may run a forward instance and a whole backward of another
// micro-batch on the same devices as one overlapped action, both starting
// together and both ending after the pair's time. The whole backward is a
// backward block, or, where the backward is split, an input block
// together with its weight block (one autograd call, as DeepSeek runs it).
//
// The pair's time is the Pairs entry of its two blocks when there is one,
// else Time when it is set, else ⌈Factor·(t_F + t_B)⌉ (t_B the whole
// backward's time), at least 1. A pair the rule gives no time may not be
// overlapped. A placement without an Overlap (nil) overlaps nothing, as
// before. File: "overlap": {"time": T} or {"factor": x}, with optional
// "pairs": [[forward id, backward id, time], …].
type Overlap struct {
	Time   int
	Factor float64
	Pairs  []OverlapPair
}

// OverlapPair is the overlapped time of one forward block and one
// backward (or input) block.
type OverlapPair struct {
	Forward, Backward int
	Time              int
}

// ParseOverlapTime reads the value of --overlap-time: a time ("3") or a
// factor of F + B ("0.7x").
func ParseOverlapTime(s string) (*Overlap, error) {
	if f, ok := strings.CutSuffix(s, "x"); ok {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 || x > 1000 {
			return nil, fmt.Errorf("overlap time %q: want a time ≥ 1 or a factor of F + B in (0, 1000] such as 0.7x", s)
		}
		return &Overlap{Factor: x}, nil
	}
	t, err := strconv.Atoi(s)
	if err != nil || t < 1 {
		return nil, fmt.Errorf("overlap time %q: want a time ≥ 1 or a factor of F + B such as 0.7x", s)
	}
	return &Overlap{Time: t}, nil
}

// WithOverlap is a copy of p that overlaps forwards and backwards by the
// rule o (--overlap-time), keeping the pairs of p's own rule (a file's),
// validated.
func (p *Placement) WithOverlap(o *Overlap) (*Placement, error) {
	q := p.Clone()
	r := *o
	if p.Overlap != nil {
		r.Pairs = p.Overlap.Pairs
	}
	q.Overlap = &r
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return q, nil
}

// String is the rule as --overlap-time writes it (pairs counted).
func (o *Overlap) String() string {
	var s string
	switch {
	case o.Time > 0:
		s = strconv.Itoa(o.Time)
	case o.Factor > 0:
		s = strconv.FormatFloat(o.Factor, 'g', -1, 64) + "x"
	default:
		s = "per pair"
	}
	if len(o.Pairs) > 0 && (o.Time > 0 || o.Factor > 0) {
		s += fmt.Sprintf(" (%d pairs of their own)", len(o.Pairs))
	}
	return s
}

// WholeBackward returns the blocks of the whole backward that gradient
// block g begins: g alone for a backward, g and its weight block for an
// input gradient of a split backward (the deferrable block that depends
// on g alone, on g's devices). ok is false when g is not a gradient the
// backward pass waits for. roles is p.Roles().
func (p *Placement) WholeBackward(g int, roles []Role) (blocks []int, ok bool) {
	return p.wholeBackward(g, roles, p.Preds(), p.Succs())
}

func (p *Placement) wholeBackward(g int, roles []Role, preds, succs [][]int) (blocks []int, ok bool) {
	switch roles[g] {
	case RoleBackward:
		return []int{g}, true
	case RoleInput:
		for _, s := range succs[g] {
			if roles[s] == RoleWeight && len(preds[s]) == 1 {
				return []int{g, s}, true
			}
		}
	}
	return nil, false
}

// OverlapGroup returns the blocks one overlapped pair of forward block f
// and gradient block g runs together (f, g and g's weight block where the
// backward is split) and the pair's time. ok is false, with the reason,
// when the rule does not let f and g overlap: no rule, f not a forward, g
// not a gradient the backward waits for, the two on different devices, or
// no time for them. roles is p.Roles().
func (p *Placement) OverlapGroup(f, g int, roles []Role) (blocks []int, t int, why string) {
	o := p.Overlap
	if o == nil {
		return nil, 0, "the placement overlaps nothing (no --overlap-time)"
	}
	if f < 0 || f >= len(p.Blocks) || g < 0 || g >= len(p.Blocks) {
		return nil, 0, "no such block"
	}
	if roles[f] != RoleForward {
		return nil, 0, fmt.Sprintf("%s is not a forward", p.Blocks[f].ID)
	}
	whole, ok := p.WholeBackward(g, roles)
	if !ok {
		return nil, 0, fmt.Sprintf("%s is not a backward or an input gradient", p.Blocks[g].ID)
	}
	if !slices.Equal(p.Blocks[f].Devices, p.Blocks[g].Devices) {
		return nil, 0, fmt.Sprintf("%s and %s run on different devices", p.Blocks[f].ID, p.Blocks[g].ID)
	}
	return p.overlapTime(f, g, append([]int{f}, whole...))
}

// OverlapGroups returns every group OverlapGroup allows (a forward, then
// the blocks of a whole backward), with its time, by forward then
// backward block index; none without a rule.
func (p *Placement) OverlapGroups() (groups [][]int, times []int) {
	if p.Overlap == nil {
		return nil, nil
	}
	roles := p.Roles()
	preds, succs := p.Preds(), p.Succs()
	whole := make([][]int, len(p.Blocks))
	for g := range p.Blocks {
		whole[g], _ = p.wholeBackward(g, roles, preds, succs)
	}
	for f := range p.Blocks {
		if roles[f] != RoleForward {
			continue
		}
		for g := range p.Blocks {
			if whole[g] == nil || !slices.Equal(p.Blocks[f].Devices, p.Blocks[g].Devices) {
				continue
			}
			if blocks, t, why := p.overlapTime(f, g, append([]int{f}, whole[g]...)); why == "" {
				groups, times = append(groups, blocks), append(times, t)
			}
		}
	}
	return groups, times
}

// overlapTime is the time of the group blocks (f, then g's whole
// backward) under the rule.
func (p *Placement) overlapTime(f, g int, blocks []int) ([]int, int, string) {
	o := p.Overlap
	for _, q := range o.Pairs {
		if q.Forward == f && q.Backward == g {
			return blocks, q.Time, ""
		}
	}
	switch {
	case o.Time > 0:
		return blocks, o.Time, ""
	case o.Factor > 0:
		sum := 0
		for _, b := range blocks {
			sum += p.Blocks[b].Time
		}
		return blocks, max(1, int(math.Ceil(o.Factor*float64(sum)-1e-9))), ""
	}
	return nil, 0, fmt.Sprintf("no overlapped time for %s with %s", p.Blocks[f].ID, p.Blocks[g].ID)
}

// validateOverlap checks the rule's numbers and pairs.
func (p *Placement) validateOverlap() error {
	o := p.Overlap
	if o == nil {
		return nil
	}
	switch {
	case o.Time < 0:
		return fmt.Errorf("overlap: time %d < 0", o.Time)
	case o.Factor < 0 || math.IsNaN(o.Factor) || math.IsInf(o.Factor, 0) || o.Factor > 1000:
		return fmt.Errorf("overlap: factor %g out of range (0, 1000]", o.Factor)
	case o.Time > 0 && o.Factor > 0:
		return fmt.Errorf("overlap: both a time and a factor")
	case o.Time == 0 && o.Factor == 0 && len(o.Pairs) == 0:
		return fmt.Errorf("overlap: no time, factor or pairs")
	}
	seen := map[[2]int]bool{}
	for n, q := range o.Pairs {
		if q.Forward < 0 || q.Forward >= len(p.Blocks) || q.Backward < 0 || q.Backward >= len(p.Blocks) {
			return fmt.Errorf("overlap: pairs[%d]: no such block", n)
		}
		if q.Time < 1 {
			return fmt.Errorf("overlap: pairs[%d]: time %d < 1", n, q.Time)
		}
		k := [2]int{q.Forward, q.Backward}
		if seen[k] {
			return fmt.Errorf("overlap: pairs[%d]: %s with %s given twice", n, p.Blocks[q.Forward].ID, p.Blocks[q.Backward].ID)
		}
		seen[k] = true
	}
	return nil
}

func overlapEqual(a, b *Overlap) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Time != b.Time || a.Factor != b.Factor || len(a.Pairs) != len(b.Pairs) {
		return false
	}
	for n := range a.Pairs {
		if a.Pairs[n] != b.Pairs[n] {
			return false
		}
	}
	return true
}

func (o *Overlap) clone() *Overlap {
	if o == nil {
		return nil
	}
	q := *o
	q.Pairs = append([]OverlapPair(nil), o.Pairs...)
	return &q
}

// appendOverlapJSON appends the "overlap" object.
func (p *Placement) appendOverlapJSON(b []byte, sep, colon string) []byte {
	o := p.Overlap
	b = append(b, '{')
	first := true
	field := func(k string) {
		if !first {
			b = append(b, sep...)
		}
		first = false
		b = appendString(b, k)
		b = append(b, colon...)
	}
	if o.Time > 0 {
		field("time")
		b = strconv.AppendInt(b, int64(o.Time), 10)
	}
	if o.Factor > 0 {
		field("factor")
		b = strconv.AppendFloat(b, o.Factor, 'g', -1, 64)
	}
	if len(o.Pairs) > 0 {
		field("pairs")
		b = append(b, '[')
		for n, q := range o.Pairs {
			if n > 0 {
				b = append(b, sep...)
			}
			b = append(b, '[')
			b = appendString(b, p.Blocks[q.Forward].ID)
			b = append(b, sep...)
			b = appendString(b, p.Blocks[q.Backward].ID)
			b = append(b, sep...)
			b = strconv.AppendInt(b, int64(q.Time), 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// decodeOverlap reads the "overlap" object; ids must name blocks.
func decodeOverlap(raw json.RawMessage, index map[string]int) (*Overlap, error) {
	o := &Overlap{}
	var pairs []json.RawMessage
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "time", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &o.Time) }},
		{Name: "factor", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &o.Factor) }},
		{Name: "pairs", Decode: func(v json.RawMessage) error { return strictjson.Array(v, &pairs) }},
	})
	if err != nil {
		return nil, err
	}
	for n, v := range pairs {
		var items []json.RawMessage
		if err := strictjson.Array(v, &items); err != nil {
			return nil, fmt.Errorf("pairs[%d]: %w", n, err)
		}
		if len(items) != 3 {
			return nil, fmt.Errorf("pairs[%d]: want [forward id, backward id, time], got %d items", n, len(items))
		}
		var q OverlapPair
		for e, dst := range []*int{&q.Forward, &q.Backward} {
			var id string
			if err := strictjson.String(items[e], &id); err != nil {
				return nil, fmt.Errorf("pairs[%d][%d]: %w", n, e, err)
			}
			i, ok := index[id]
			if !ok {
				return nil, fmt.Errorf("pairs[%d]: unknown id %q", n, id)
			}
			*dst = i
		}
		if err := strictjson.Int(items[2], &q.Time); err != nil {
			return nil, fmt.Errorf("pairs[%d][2]: %w", n, err)
		}
		o.Pairs = append(o.Pairs, q)
	}
	return o, nil
}
