package placement

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/quantity"
)

// The placement file is strict: every field but "name" is required, an
// unknown or repeated field is an error, field names match exactly (unlike
// encoding/json's default, which ignores case), null is never a value, and
// nothing may follow the object. Errors are one line and name the field,
// block or id at fault.

// Parse reads a placement file and validates it.
func Parse(data []byte) (*Placement, error) {
	p := new(Placement)
	if err := p.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return p, nil
}

// Load reads and validates the placement file at path. Errors start with
// the path, e.g. `testdata/bad/cycle.json: cycle f1 -> b1 -> f1`.
func Load(path string) (*Placement, error) {
	return strictjson.Load(path, Parse)
}

// UnmarshalJSON decodes a placement file strictly (see Parse) and validates
// it. On error p is left unchanged.
func (p *Placement) UnmarshalJSON(data []byte) error {
	q, err := decodeFile(data)
	if err != nil {
		return err
	}
	if err := q.Validate(); err != nil {
		return err
	}
	*p = *q
	return nil
}

// MarshalJSON encodes a valid placement compactly, fields in the file's
// order. An invalid placement is an error, so that whatever is written can
// be read back.
func (p *Placement) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.appendJSON(nil, false), nil
}

// Write writes a valid placement as an indented placement file, one block
// and one dependency a line, ending with a newline. The bytes depend only
// on the placement, and Parse gives the same placement back.
func (p *Placement) Write(w io.Writer) error {
	if err := p.Validate(); err != nil {
		return err
	}
	b := p.appendJSON(nil, true)
	b = append(b, '\n')
	_, err := w.Write(b)
	return err
}

// appendJSON encodes p, which must be valid.
func (p *Placement) appendJSON(b []byte, pretty bool) []byte {
	st := jsonStyle{"", "", ",", ":"}
	if pretty {
		st = jsonStyle{"\n", "  ", ", ", ": "}
	}
	nl, ind, sep, colon, key := st.nl, st.ind, st.sep, st.colon, st.key
	b = append(b, '{')
	b = append(b, nl...)
	if p.Name != "" {
		b = key(b, 1, "name")
		b = appendString(b, p.Name)
		b = append(b, ',')
		b = append(b, nl...)
	}
	b = key(b, 1, "devices")
	b = strconv.AppendInt(b, int64(p.Devices), 10)
	b = append(b, ',')
	b = append(b, nl...)
	b = key(b, 1, "blocks")
	b = append(b, '[')
	b = append(b, nl...)
	for i, bl := range p.Blocks {
		if pretty {
			b = append(b, ind+ind...)
		}
		b = st.appendBlock(b, bl)
		if i < len(p.Blocks)-1 {
			b = append(b, ',')
		}
		b = append(b, nl...)
	}
	if pretty {
		b = append(b, ind...)
	}
	b = append(b, "],"...)
	b = append(b, nl...)
	b = key(b, 1, "deps")
	b = append(b, '[')
	if len(p.Deps) > 0 {
		b = append(b, nl...)
	}
	for n, d := range p.Deps {
		if pretty {
			b = append(b, ind+ind...)
		}
		b = append(b, '[')
		b = appendString(b, p.Blocks[d.From].ID)
		b = append(b, sep...)
		b = appendString(b, p.Blocks[d.To].ID)
		if z := p.Size(d); z != 1 {
			b = append(b, sep...)
			b = strconv.AppendFloat(b, z+0, 'g', -1, 64) // +0: no "-0"
		}
		b = append(b, ']')
		if n < len(p.Deps)-1 {
			b = append(b, ',')
		}
		b = append(b, nl...)
	}
	if pretty && len(p.Deps) > 0 {
		b = append(b, ind...)
	}
	b = append(b, ']')
	if p.Overlap != nil {
		b = append(b, ',')
		b = append(b, nl...)
		b = key(b, 1, "overlap")
		b = p.appendOverlapJSON(b, sep, colon)
	}
	if u := p.Units; u != nil {
		b = append(b, ',')
		b = append(b, nl...)
		b = key(b, 1, "units")
		b = st.appendUnits(b, u)
	}
	b = append(b, nl...)
	return append(b, '}')
}

// jsonStyle is how a placement file is laid out: compact (no newlines,
// "," and ":") or pretty (one block per line, indented).
type jsonStyle struct{ nl, ind, sep, colon string }

// key appends key k at depth levels of indentation and its colon.
func (st jsonStyle) key(b []byte, depth int, k string) []byte {
	for range depth {
		b = append(b, st.ind...)
	}
	b = appendString(b, k)
	return append(b, st.colon...)
}

// appendBlock appends one block as an object on one line.
func (st jsonStyle) appendBlock(b []byte, bl Block) []byte {
	sep, key := st.sep, st.key
	b = append(b, '{')
	b = key(b, 0, "id")
	b = appendString(b, bl.ID)
	b = append(b, sep...)
	b = key(b, 0, "kind")
	b = appendString(b, string(bl.Kind))
	b = append(b, sep...)
	if len(bl.Candidates) == 0 {
		b = key(b, 0, "devices")
		b = appendInts(b, bl.Devices, sep)
	} else {
		b = key(b, 0, "candidates")
		b = append(b, '[')
		for n, g := range bl.Candidates {
			if n > 0 {
				b = append(b, sep...)
			}
			b = appendInts(b, g, sep)
		}
		b = append(b, ']')
		if bl.Devices != nil {
			b = append(b, sep...)
			b = key(b, 0, "chosen")
			b = appendInts(b, bl.Devices, sep)
		}
	}
	// Every field after the devices: its separator, key and value.
	field := func(k string, value func([]byte) []byte) {
		b = append(b, sep...)
		b = value(key(b, 0, k))
	}
	integer := func(v int) func([]byte) []byte {
		return func(b []byte) []byte { return strconv.AppendInt(b, int64(v), 10) }
	}
	field("time", integer(bl.Time))
	field("memory", integer(bl.Memory))
	if bl.Offload != 0 {
		field("offload", integer(bl.Offload))
	}
	if bl.Activation != 0 {
		field("activation", func(b []byte) []byte { return strconv.AppendFloat(b, bl.Activation+0, 'g', -1, 64) })
	}
	if bl.Recompute {
		field("recompute", func(b []byte) []byte { return append(b, "true"...) })
	}
	if bl.Checkpoint != 0 {
		field("checkpoint", integer(bl.Checkpoint))
	}
	if bl.RecomputedLayers != 0 {
		field("recomputed_layers", integer(bl.RecomputedLayers))
	}
	b = append(b, '}')
	return b
}

// appendUnits appends the "units" object.
func (st jsonStyle) appendUnits(b []byte, u *quantity.Scale) []byte {
	sep, key := st.sep, st.key
	b = append(b, '{')
	first := true
	field := func(k string) {
		if !first {
			b = append(b, sep...)
		}
		first = false
		b = key(b, 0, k)
	}
	if u.Time != "" {
		field("time")
		b = appendString(b, u.Time)
	}
	if u.Step != 0 {
		field("step")
		b = strconv.AppendFloat(b, u.Step, 'g', -1, 64)
	}
	if u.Search != 0 {
		field("search_step")
		b = strconv.AppendInt(b, int64(u.Search), 10)
	}
	if u.MemoryBytes != 0 {
		field("memory_bytes")
		b = strconv.AppendFloat(b, u.MemoryBytes, 'g', -1, 64)
	}
	b = append(b, '}')
	return b
}

// decodeUnits reads a placement file's "units": {"time", "step",
// "search_step", "memory_bytes"}, each optional (Scale's Validate says
// which go together).
func decodeUnits(raw json.RawMessage) (*quantity.Scale, error) {
	u := &quantity.Scale{}
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "time", Decode: func(v json.RawMessage) error { return strictjson.String(v, &u.Time) }},
		{Name: "step", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &u.Step) }},
		{Name: "search_step", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &u.Search) }},
		{Name: "memory_bytes", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &u.MemoryBytes) }},
	})
	if err != nil {
		return nil, err
	}
	return u, u.Validate()
}

// appendInts appends a JSON array of integers.
func appendInts(b []byte, xs []int, sep string) []byte {
	b = append(b, '[')
	for n, d := range xs {
		if n > 0 {
			b = append(b, sep...)
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string. s is valid UTF-8 (Validate).
func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return strconv.AppendQuote(b, s)
	}
	return append(b, q...)
}

// decodeFile decodes the structure of a placement file without validating
// the placement beyond what decoding needs (ids in deps must exist).
func decodeFile(data []byte) (*Placement, error) {
	raw, err := strictjson.Top(data, "placement object")
	if err != nil {
		return nil, err
	}

	p := &Placement{}
	// Peek at the name so that every error can carry it.
	var peek struct{ Name string }
	_ = json.Unmarshal(raw, &peek)
	p.Name = peek.Name

	var blocks, deps []json.RawMessage
	var overlap json.RawMessage
	err = strictjson.Object(raw, []strictjson.Field{
		{Name: "name", Decode: func(v json.RawMessage) error { return strictjson.String(v, &p.Name) }},
		{Name: "devices", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &p.Devices) }},
		{Name: "blocks", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &blocks) }},
		{Name: "deps", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &deps) }},
		{Name: "overlap", Decode: func(v json.RawMessage) error { overlap = v; return nil }},
		{Name: "units", Decode: func(v json.RawMessage) error {
			u, err := decodeUnits(v)
			if err != nil {
				return fmt.Errorf("field \"units\": %w", err)
			}
			p.Units = u
			return nil
		}},
	})
	if err != nil {
		return nil, p.wrap(err)
	}
	p.Blocks = make([]Block, len(blocks))
	for i, v := range blocks {
		if err := decodeBlock(v, &p.Blocks[i]); err != nil {
			var id struct{ ID string }
			_ = json.Unmarshal(v, &id)
			return nil, p.wrap(fmt.Errorf("%s: %w", blockName(i, id.ID), err))
		}
	}
	index := make(map[string]int, len(p.Blocks))
	for i := len(p.Blocks) - 1; i >= 0; i-- { // first wins; Validate reports duplicates
		index[p.Blocks[i].ID] = i
	}
	for n, v := range deps {
		var ends []json.RawMessage
		if err := strictjson.Array(v, &ends); err != nil {
			return nil, p.wrap(fmt.Errorf("deps[%d]: %w", n, err))
		}
		if len(ends) != 2 && len(ends) != 3 {
			return nil, p.wrap(fmt.Errorf("deps[%d]: want [from, to] or [from, to, size], got %d items", n, len(ends)))
		}
		var d [2]int
		for e, ev := range ends[:2] {
			var id string
			if err := strictjson.String(ev, &id); err != nil {
				return nil, p.wrap(fmt.Errorf("deps[%d][%d]: %w", n, e, err))
			}
			i, ok := index[id]
			if !ok {
				return nil, p.wrap(fmt.Errorf("deps[%d]: unknown id %q", n, id))
			}
			d[e] = i
		}
		dep := Dep{From: d[0], To: d[1]}
		p.Deps = append(p.Deps, dep)
		if len(ends) == 3 {
			var z float64
			if err := strictjson.Float(ends[2], &z); err != nil {
				return nil, p.wrap(fmt.Errorf("deps[%d][2]: size: %w", n, err))
			}
			if p.Sizes == nil {
				p.Sizes = map[Dep]float64{}
			}
			if _, dup := p.Sizes[dep]; !dup { // a duplicate dependency is Validate's to report
				p.Sizes[dep] = z
			}
		}
	}
	if overlap != nil {
		if p.Overlap, err = decodeOverlap(overlap, index); err != nil {
			return nil, p.wrap(fmt.Errorf("field \"overlap\": %w", err))
		}
	}
	return p, nil
}

func decodeBlock(raw json.RawMessage, b *Block) error {
	var devs, cands, chosen []json.RawMessage
	var kind string
	var hasDevices, hasCandidates, hasChosen bool
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "id", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &b.ID) }},
		{Name: "kind", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &kind) }},
		{Name: "devices", Decode: func(v json.RawMessage) error { hasDevices = true; return strictjson.Array(v, &devs) }},
		{Name: "candidates", Decode: func(v json.RawMessage) error { hasCandidates = true; return strictjson.Array(v, &cands) }},
		{Name: "chosen", Decode: func(v json.RawMessage) error { hasChosen = true; return strictjson.Array(v, &chosen) }},
		{Name: "time", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &b.Time) }},
		{Name: "memory", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &b.Memory) }},
		{Name: "offload", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &b.Offload) }},
		{Name: "activation", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &b.Activation) }},
		{Name: "recompute", Decode: func(v json.RawMessage) error { return strictjson.Bool(v, &b.Recompute) }},
		{Name: "checkpoint", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &b.Checkpoint) }},
		{Name: "recomputed_layers", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &b.RecomputedLayers) }},
	})
	if err != nil {
		return err
	}
	b.Kind = Kind(kind)
	switch {
	case hasDevices && hasCandidates:
		return fmt.Errorf("both \"devices\" and \"candidates\": give one (\"chosen\" records a choice among candidates)")
	case hasChosen && !hasCandidates:
		return fmt.Errorf("field \"chosen\" without \"candidates\"")
	case hasCandidates:
		if len(cands) == 0 {
			return fmt.Errorf("field \"candidates\": empty list (give at least one device group)")
		}
		b.Candidates = make([][]int, len(cands))
		for n, v := range cands {
			var g []json.RawMessage
			if err := strictjson.Array(v, &g); err != nil {
				return fmt.Errorf("field \"candidates\": item %d: %w", n, err)
			}
			if b.Candidates[n], err = decodeInts(g); err != nil {
				return fmt.Errorf("field \"candidates\": item %d: %w", n, err)
			}
		}
		if hasChosen {
			if b.Devices, err = decodeInts(chosen); err != nil {
				return fmt.Errorf("field \"chosen\": %w", err)
			}
			if len(b.Devices) == 0 {
				return fmt.Errorf("field \"chosen\": empty device group")
			}
		}
		return nil
	case !hasDevices:
		return fmt.Errorf("missing field %q", "devices")
	}
	if b.Devices, err = decodeInts(devs); err != nil {
		return fmt.Errorf("field \"devices\": %w", err)
	}
	return nil
}

// decodeInts decodes the items of an array of integers.
func decodeInts(items []json.RawMessage) ([]int, error) {
	out := make([]int, len(items))
	for n, v := range items {
		if err := strictjson.Int(v, &out[n]); err != nil {
			return nil, fmt.Errorf("item %d: %w", n, err)
		}
	}
	return out, nil
}
