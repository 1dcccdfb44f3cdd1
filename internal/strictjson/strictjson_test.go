package strictjson

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestObject(t *testing.T) {
	var n int
	var s string
	var x float64
	fields := func() []Field {
		return []Field{
			{Name: "n", Required: true, Decode: func(v json.RawMessage) error { return Int(v, &n) }},
			{Name: "s", Decode: func(v json.RawMessage) error { return String(v, &s) }},
			{Name: "x", Decode: func(v json.RawMessage) error { return Float(v, &x) }},
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"n": 1, "s": "a", "x": 0.5}`, ""},
		{`{"n": 1, "m": 2}`, `unknown field "m"`},
		{`{"n": 1, "N": 2}`, `unknown field "N"`},
		{`{"n": 1, "n": 2}`, `field "n" given twice`},
		{`{"s": "a"}`, `missing field "n"`},
		{`{"n": 1.5}`, `field "n": want an integer, got 1.5`},
		{`{"n": null}`, `field "n": want an integer, got null`},
		{`{"n": 1, "x": "1"}`, `field "x": want a number, got a string`},
		{`[1]`, `want an object, got an array`},
	} {
		err := Object(json.RawMessage(c.in), fields())
		if c.want == "" {
			if err != nil || n != 1 || s != "a" || x != 0.5 {
				t.Errorf("%s: %v (n %d, s %q, x %v)", c.in, err, n, s, x)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestTop(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty input: want a thing object"},
		{"{} {}", "trailing data after the thing object at line 1, column 4"},
		{"{\n  \"a\": 1\n  \"b\": 2}", "malformed JSON at line 3, column 3"}, // the quote after a missing comma
		{"{\"a\": ", "malformed JSON: unexpected end of input"},
	} {
		_, err := Top([]byte(c.in), "thing object")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	if raw, err := Top([]byte(" {\"a\": 1}\n"), "thing object"); err != nil || Type(raw) != "an object" {
		t.Errorf("valid input: %v", err)
	}
}
