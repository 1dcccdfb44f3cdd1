// Package strictjson is the one strict JSON decoder of tessel's input
// files (placements, schedules, models): field names match exactly, an
// unknown or repeated field is an error, null is never a value, nothing
// may follow the top-level value, and every error is one line naming the
// field and, for syntax errors, the line and column.
//
// It decodes structure only; what the values mean is the caller's to check.
// It is not a general JSON library: it serves tessel's own file formats.
package strictjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/tessel-pp/tessel/limits"
)

// Field is one key of a strict JSON object.
type Field struct {
	Name     string
	Required bool
	Decode   func(json.RawMessage) error
}

// Top decodes the single top-level value of data, which what names (for
// example "placement object"). An empty input, a syntax error and anything
// after the value are errors with line and column.
func Top(data []byte, what string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("empty input: want a %s", what)
		}
		return nil, SyntaxError(data, err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		off := end
		for off < int64(len(data)) && isSpace(data[off]) {
			off++
		}
		line, col := Position(data, off)
		return nil, fmt.Errorf("trailing data after the %s at line %d, column %d", what, line, col)
	}
	return raw, nil
}

// Object decodes raw, which is syntactically valid JSON, as an object whose
// keys are exactly some of fields (each at most once, every required one
// present), calling each field's Decode on its value.
func Object(raw json.RawMessage, fields []Field) error {
	if kind := Type(raw); kind != "an object" {
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
			if f.Name == k {
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
		if err := fields[n].Decode(v); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
	}
	for i, f := range fields {
		if f.Required && !seen[i] {
			return fmt.Errorf("missing field %q", f.Name)
		}
	}
	return nil
}

// String decodes a JSON string.
func String(raw json.RawMessage, s *string) error {
	if kind := Type(raw); kind != "a string" {
		return fmt.Errorf("want a string, got %s", kind)
	}
	return json.Unmarshal(raw, s)
}

// Int decodes a JSON number that is an integer.
func Int(raw json.RawMessage, x *int) error {
	if kind := Type(raw); kind != "a number" {
		return fmt.Errorf("want an integer, got %s", kind)
	}
	if err := json.Unmarshal(raw, x); err != nil {
		return fmt.Errorf("want an integer, got %s", Shorten(string(raw)))
	}
	return nil
}

// Float decodes a finite JSON number.
func Float(raw json.RawMessage, x *float64) error {
	if kind := Type(raw); kind != "a number" {
		return fmt.Errorf("want a number, got %s", kind)
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("want a finite number, got %s", Shorten(string(raw)))
	}
	*x = v
	return nil
}

// Bool decodes a JSON boolean.
func Bool(raw json.RawMessage, b *bool) error {
	if kind := Type(raw); kind != "a boolean" {
		return fmt.Errorf("want true or false, got %s", kind)
	}
	return json.Unmarshal(raw, b)
}

// Array decodes a JSON array into its raw items.
func Array(raw json.RawMessage, a *[]json.RawMessage) error {
	if kind := Type(raw); kind != "an array" {
		return fmt.Errorf("want an array, got %s", kind)
	}
	return json.Unmarshal(raw, a)
}

// Type names the type of a valid JSON value ("an object", "null", ...).
func Type(raw json.RawMessage) string {
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

// Shorten cuts s for an error message.
func Shorten(s string) string {
	const n = 24
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Position turns a byte offset into a 1-based line and column.
func Position(data []byte, off int64) (line, col int) {
	off = max(min(off, int64(len(data))), 0)
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// SyntaxError makes a one-line error of a JSON syntax error.
func SyntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read up to and including the bad one.
		line, col := Position(data, max(se.Offset-1, 0))
		return fmt.Errorf("malformed JSON at line %d, column %d: %v", line, col, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("malformed JSON: unexpected end of input")
	}
	return fmt.Errorf("malformed JSON: %v", err)
}

// Load reads the file at path, of at most limits.FileBytes, and parses
// it; errors of both start with the path (`testdata/bad/cycle.json: cycle
// f1 -> b1 -> f1`), and a missing file reads "path: no such file or
// directory", without the operation Go's error would add.
func Load[T any](path string, parse func([]byte) (T, error)) (T, error) {
	return LoadMax(path, limits.FileBytes, parse)
}

// LoadMax is Load for a file of at most max bytes. A file whose first
// byte (after white space) cannot start JSON is refused before the rest
// is read: a device of zeros is not read up to max.
func LoadMax[T any](path string, max int64, parse func([]byte) (T, error)) (T, error) {
	var zero T
	f, err := limits.Open(path, max)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(512)
	if i := bytes.IndexFunc(head, func(r rune) bool { return !isSpace(byte(r)) }); i >= 0 && !bytes.ContainsRune([]byte(`{["-0123456789tfn`), rune(head[i])) {
		line, col := Position(head, int64(i))
		return zero, fmt.Errorf("%s: malformed JSON at line %d, column %d: invalid character %q looking for beginning of value", path, line, col, head[i])
	}
	data, err := limits.Read(path, br, max)
	if err != nil {
		return zero, err
	}
	v, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
