package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"tessel/placement"
)

// The schedule file (design notes, "Schedule file") is strict like the
// placement file: unknown or repeated fields are errors, field names match
// exactly, null is never a value, and nothing may follow the object.
// "placement", "micro_batches", "memory" and "instances" are required and
// alone define the schedule. "repetend" and "metrics" are optional and
// derived: they are kept (Schedule.Repetend, Schedule.Claimed) for Verify
// to check, never trusted, and Write recomputes the metrics.

// Write writes s as an indented schedule file ending with a newline: the
// placement as placement.Write lays it out, one instance a line in file
// order (see Sort), the repetend when s has one, and the metrics Measure
// computes. The bytes depend only on s, and Parse gives s back (with
// instances in file order). s need not be valid, but its placement must be
// and its instances must name existing blocks.
func (s *Schedule) Write(w io.Writer) error {
	data, err := s.marshal()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (s *Schedule) marshal() ([]byte, error) {
	p := s.Placement
	if p == nil {
		return nil, fmt.Errorf("write schedule: no placement")
	}
	var pb bytes.Buffer
	if err := p.Write(&pb); err != nil {
		return nil, fmt.Errorf("write schedule: %w", err)
	}
	for x, in := range s.Instances {
		if in.Block < 0 || in.Block >= len(p.Blocks) {
			return nil, fmt.Errorf("write schedule: instance %d: block index %d out of range 0..%d", x, in.Block, len(p.Blocks)-1)
		}
	}
	if rp := s.Repetend; rp != nil && len(rp.Offsets) != len(p.Blocks) {
		return nil, fmt.Errorf("write schedule: repetend has %d offsets for %d blocks", len(rp.Offsets), len(p.Blocks))
	}

	b := make([]byte, 0, 256+pb.Len()+48*len(s.Instances))
	b = append(b, "{\n  \"placement\": "...)
	// Indent the placement file one level, without its final newline.
	for i, line := range bytes.Split(bytes.TrimSuffix(pb.Bytes(), []byte{'\n'}), []byte{'\n'}) {
		if i > 0 {
			b = append(b, "\n  "...)
		}
		b = append(b, line...)
	}
	b = append(b, ",\n  \"micro_batches\": "...)
	b = strconv.AppendInt(b, int64(s.MicroBatches), 10)
	b = append(b, ",\n  \"memory\": "...)
	b = strconv.AppendInt(b, int64(s.Memory), 10)
	b = append(b, ",\n  \"instances\": ["...)
	ins := append([]Instance(nil), s.Instances...)
	sortInstances(p, ins)
	for x, in := range ins {
		if x > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\"block\": "...)
		b = appendString(b, p.Blocks[in.Block].ID)
		b = append(b, ", \"micro\": "...)
		b = strconv.AppendInt(b, int64(in.Micro), 10)
		b = append(b, ", \"start\": "...)
		b = strconv.AppendInt(b, int64(in.Start), 10)
		b = append(b, '}')
	}
	if len(ins) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, ']')
	if rp := s.Repetend; rp != nil {
		b = append(b, ",\n  \"repetend\": {\"nr\": "...)
		b = strconv.AppendInt(b, int64(rp.NR), 10)
		b = append(b, ", \"period\": "...)
		b = strconv.AppendInt(b, int64(rp.Period), 10)
		b = append(b, ", \"offsets\": {"...)
		for i, o := range rp.Offsets {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendString(b, p.Blocks[i].ID)
			b = append(b, ": "...)
			b = strconv.AppendInt(b, int64(o), 10)
		}
		b = append(b, "}, \"start\": "...)
		b = strconv.AppendInt(b, int64(rp.Start), 10)
		b = append(b, ", \"iterations\": "...)
		b = strconv.AppendInt(b, int64(rp.Iterations), 10)
		b = append(b, '}')
	}
	m := Measure(s)
	b = append(b, ",\n  \"metrics\": {\"makespan\": "...)
	b = strconv.AppendInt(b, int64(m.Makespan), 10)
	b = append(b, ", \"bubble_rate\": "...)
	b = strconv.AppendFloat(b, roundRate(m.BubbleRate), 'f', -1, 64)
	b = append(b, ", \"peak_memory\": "...)
	b = append(b, intList(m.PeakMemory)...)
	b = append(b, "}\n}\n"...)
	return b, nil
}

func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // not for a string
		return strconv.AppendQuote(b, s)
	}
	return append(b, q...)
}

// Load reads the schedule file at path (see Parse). Errors start with the
// path.
func Load(path string) (*Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse reads a schedule file. It checks the file's structure, the
// placement (placement.Parse), 1 ≤ micro_batches ≤ MaxMicroBatches,
// memory ≥ 0, that instances name existing blocks and that the repetend's
// offsets name every block once. It does not verify the schedule: that is
// Verify's job, which also checks the optional repetend and metrics.
// Errors are one line and name the field or instance at fault.
func Parse(data []byte) (*Schedule, error) {
	raw, err := single(data)
	if err != nil {
		return nil, err
	}
	s := &Schedule{}
	var pl, instances, rep, met json.RawMessage
	err = decodeObject(raw, []field{
		{"placement", true, func(v json.RawMessage) error { pl = v; return nil }},
		{"micro_batches", true, func(v json.RawMessage) error { return decodeInt(v, &s.MicroBatches) }},
		{"memory", true, func(v json.RawMessage) error { return decodeInt(v, &s.Memory) }},
		{"instances", true, func(v json.RawMessage) error { instances = v; return nil }},
		{"repetend", false, func(v json.RawMessage) error { rep = v; return nil }},
		{"metrics", false, func(v json.RawMessage) error { met = v; return nil }},
	})
	if err != nil {
		return nil, err
	}
	if jsonType(pl) != "an object" {
		return nil, fmt.Errorf("field \"placement\": want an object, got %s", jsonType(pl))
	}
	if s.Placement, err = placement.Parse(pl); err != nil {
		return nil, fmt.Errorf("field \"placement\": %w", err)
	}
	if s.MicroBatches < 1 || s.MicroBatches > MaxMicroBatches {
		return nil, fmt.Errorf("field \"micro_batches\": %d out of range 1..%d", s.MicroBatches, MaxMicroBatches)
	}
	if s.Memory < 0 {
		return nil, fmt.Errorf("field \"memory\": %d is negative (0 means unlimited)", s.Memory)
	}
	index := make(map[string]int, len(s.Placement.Blocks))
	for i, b := range s.Placement.Blocks {
		index[b.ID] = i
	}
	if s.Instances, err = decodeInstances(instances, index); err != nil {
		return nil, fmt.Errorf("field \"instances\": %w", err)
	}
	if rep != nil {
		if s.Repetend, err = decodeRepetend(rep, s.Placement); err != nil {
			return nil, fmt.Errorf("field \"repetend\": %w", err)
		}
	}
	if met != nil {
		if s.Claimed, err = decodeMetrics(met); err != nil {
			return nil, fmt.Errorf("field \"metrics\": %w", err)
		}
	}
	return s, nil
}

// single returns the one JSON value of data, rejecting trailing data.
func single(data []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("empty input: want a schedule object")
		}
		return nil, syntaxError(data, err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		for end < int64(len(data)) && isSpace(data[end]) {
			end++
		}
		line, col := position(data, end)
		return nil, fmt.Errorf("trailing data after the schedule object at line %d, column %d", line, col)
	}
	if k := jsonType(raw); k != "an object" {
		return nil, fmt.Errorf("want a schedule object, got %s", k)
	}
	return raw, nil
}

func decodeInstances(raw json.RawMessage, index map[string]int) ([]Instance, error) {
	var items []json.RawMessage
	if err := decodeArray(raw, &items); err != nil {
		return nil, err
	}
	out := make([]Instance, len(items))
	for x, v := range items {
		in := &out[x]
		var id string
		err := decodeObject(v, []field{
			{"block", true, func(v json.RawMessage) error { return decodeString(v, &id) }},
			{"micro", true, func(v json.RawMessage) error { return decodeInt(v, &in.Micro) }},
			{"start", true, func(v json.RawMessage) error { return decodeInt(v, &in.Start) }},
		})
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", x, err)
		}
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("item %d: unknown block %q", x, id)
		}
		in.Block = i
	}
	return out, nil
}

func decodeRepetend(raw json.RawMessage, p *placement.Placement) (*Repetend, error) {
	rp := &Repetend{}
	var offsets json.RawMessage
	err := decodeObject(raw, []field{
		{"nr", true, func(v json.RawMessage) error { return decodeInt(v, &rp.NR) }},
		{"period", true, func(v json.RawMessage) error { return decodeInt(v, &rp.Period) }},
		{"offsets", true, func(v json.RawMessage) error { offsets = v; return nil }},
		{"start", true, func(v json.RawMessage) error { return decodeInt(v, &rp.Start) }},
		{"iterations", true, func(v json.RawMessage) error { return decodeInt(v, &rp.Iterations) }},
	})
	if err != nil {
		return nil, err
	}
	// The offsets object has one field per block id, each required.
	rp.Offsets = make([]int, len(p.Blocks))
	fields := make([]field, len(p.Blocks))
	for i, b := range p.Blocks {
		fields[i] = field{b.ID, true, func(v json.RawMessage) error { return decodeInt(v, &rp.Offsets[i]) }}
	}
	if err := decodeObject(offsets, fields); err != nil {
		return nil, fmt.Errorf("field \"offsets\": %w", err)
	}
	return rp, nil
}

func decodeMetrics(raw json.RawMessage) (*Claimed, error) {
	c := &Claimed{}
	var peak []json.RawMessage
	err := decodeObject(raw, []field{
		{"makespan", true, func(v json.RawMessage) error { return decodeInt(v, &c.Makespan) }},
		{"bubble_rate", true, func(v json.RawMessage) error { return decodeFloat(v, &c.BubbleRate) }},
		{"peak_memory", true, func(v json.RawMessage) error { return decodeArray(v, &peak) }},
	})
	if err != nil {
		return nil, err
	}
	c.PeakMemory = make([]int, len(peak))
	for d, v := range peak {
		if err := decodeInt(v, &c.PeakMemory[d]); err != nil {
			return nil, fmt.Errorf("field \"peak_memory\": item %d: %w", d, err)
		}
	}
	return c, nil
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
				break
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

func decodeFloat(raw json.RawMessage, x *float64) error {
	if kind := jsonType(raw); kind != "a number" {
		return fmt.Errorf("want a number, got %s", kind)
	}
	if err := json.Unmarshal(raw, x); err != nil {
		return fmt.Errorf("want a number, got %s", shorten(string(raw)))
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
		line, col := position(data, se.Offset)
		return fmt.Errorf("malformed JSON at line %d, column %d: %v", line, col, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("malformed JSON: unexpected end of input")
	}
	return fmt.Errorf("malformed JSON: %v", err)
}
