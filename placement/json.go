package placement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
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
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
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
	nl, ind, sep, colon := "", "", ",", ":"
	if pretty {
		nl, ind, sep, colon = "\n", "  ", ", ", ": "
	}
	key := func(b []byte, depth int, k string) []byte {
		for range depth {
			b = append(b, ind...)
		}
		b = appendString(b, k)
		return append(b, colon...)
	}
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
		b = append(b, '{')
		b = key(b, 0, "id")
		b = appendString(b, bl.ID)
		b = append(b, sep...)
		b = key(b, 0, "kind")
		b = appendString(b, string(bl.Kind))
		b = append(b, sep...)
		b = key(b, 0, "devices")
		b = append(b, '[')
		for n, d := range bl.Devices {
			if n > 0 {
				b = append(b, sep...)
			}
			b = strconv.AppendInt(b, int64(d), 10)
		}
		b = append(b, ']')
		b = append(b, sep...)
		b = key(b, 0, "time")
		b = strconv.AppendInt(b, int64(bl.Time), 10)
		b = append(b, sep...)
		b = key(b, 0, "memory")
		b = strconv.AppendInt(b, int64(bl.Memory), 10)
		b = append(b, '}')
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
	b = append(b, nl...)
	return append(b, '}')
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
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("empty input: want a placement object")
		}
		return nil, syntaxError(data, err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		off := end
		for off < int64(len(data)) && isSpace(data[off]) {
			off++
		}
		line, col := position(data, off)
		return nil, fmt.Errorf("trailing data after the placement object at line %d, column %d", line, col)
	}

	p := &Placement{}
	// Peek at the name so that every error can carry it.
	var peek struct{ Name string }
	_ = json.Unmarshal(raw, &peek)
	p.Name = peek.Name

	var blocks, deps []json.RawMessage
	err := decodeObject(raw, []field{
		{"name", false, func(v json.RawMessage) error { return decodeString(v, &p.Name) }},
		{"devices", true, func(v json.RawMessage) error { return decodeInt(v, &p.Devices) }},
		{"blocks", true, func(v json.RawMessage) error { return decodeArray(v, &blocks) }},
		{"deps", true, func(v json.RawMessage) error { return decodeArray(v, &deps) }},
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
		if err := decodeArray(v, &ends); err != nil {
			return nil, p.wrap(fmt.Errorf("deps[%d]: %w", n, err))
		}
		if len(ends) != 2 {
			return nil, p.wrap(fmt.Errorf("deps[%d]: want [from, to], got %d ids", n, len(ends)))
		}
		var d [2]int
		for e, ev := range ends {
			var id string
			if err := decodeString(ev, &id); err != nil {
				return nil, p.wrap(fmt.Errorf("deps[%d][%d]: %w", n, e, err))
			}
			i, ok := index[id]
			if !ok {
				return nil, p.wrap(fmt.Errorf("deps[%d]: unknown id %q", n, id))
			}
			d[e] = i
		}
		p.Deps = append(p.Deps, Dep{From: d[0], To: d[1]})
	}
	return p, nil
}

func decodeBlock(raw json.RawMessage, b *Block) error {
	var devs []json.RawMessage
	var kind string
	err := decodeObject(raw, []field{
		{"id", true, func(v json.RawMessage) error { return decodeString(v, &b.ID) }},
		{"kind", true, func(v json.RawMessage) error { return decodeString(v, &kind) }},
		{"devices", true, func(v json.RawMessage) error { return decodeArray(v, &devs) }},
		{"time", true, func(v json.RawMessage) error { return decodeInt(v, &b.Time) }},
		{"memory", true, func(v json.RawMessage) error { return decodeInt(v, &b.Memory) }},
	})
	if err != nil {
		return err
	}
	b.Kind = Kind(kind)
	b.Devices = make([]int, len(devs))
	for n, v := range devs {
		if err := decodeInt(v, &b.Devices[n]); err != nil {
			return fmt.Errorf("field \"devices\": item %d: %w", n, err)
		}
	}
	return nil
}

// field is one key of a strict JSON object.
type field struct {
	name     string
	required bool
	decode   func(json.RawMessage) error
}

// decodeObject decodes raw, which is syntactically valid JSON, as an object
// whose keys are exactly some of fields (each at most once, every required
// one present), calling each field's decode on its value.
func decodeObject(raw json.RawMessage, fields []field) error {
	if kind := jsonType(raw); kind != "an object" {
		return fmt.Errorf("want an object, got %s", kind)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return err
	}
	seen := make([]bool, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		n := -1
		for i, f := range fields {
			if f.name == k {
				n = i
			}
		}
		if n < 0 {
			return fmt.Errorf("unknown field %q", k)
		}
		if seen[n] {
			return fmt.Errorf("field %q given twice", k)
		}
		seen[n] = true
		if err := fields[n].decode(v); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
	}
	for i, f := range fields {
		if f.required && !seen[i] {
			return fmt.Errorf("missing field %q", f.name)
		}
	}
	return nil
}

func decodeString(raw json.RawMessage, s *string) error {
	if kind := jsonType(raw); kind != "a string" {
		return fmt.Errorf("want a string, got %s", kind)
	}
	return json.Unmarshal(raw, s)
}

func decodeInt(raw json.RawMessage, x *int) error {
	if kind := jsonType(raw); kind != "a number" {
		return fmt.Errorf("want an integer, got %s", kind)
	}
	if err := json.Unmarshal(raw, x); err != nil {
		return fmt.Errorf("want an integer, got %s", shorten(string(raw)))
	}
	return nil
}

func decodeArray(raw json.RawMessage, a *[]json.RawMessage) error {
	if kind := jsonType(raw); kind != "an array" {
		return fmt.Errorf("want an array, got %s", kind)
	}
	return json.Unmarshal(raw, a)
}

// jsonType names the type of a valid JSON value.
func jsonType(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func shorten(s string) string {
	const n = 24
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(off, int64(len(data)))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// syntaxError makes a one-line error of a JSON syntax error.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read up to and including the bad one.
		line, col := position(data, max(se.Offset-1, 0))
		return fmt.Errorf("malformed JSON at line %d, column %d: %v", line, col, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("malformed JSON: unexpected end of input")
	}
	return fmt.Errorf("malformed JSON: %v", err)
}
