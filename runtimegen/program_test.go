package runtimegen

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestOpTextRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		text string
	}{
		{Op{Kind: Compute, Block: "f0", Micro: 3}, "compute f0@3"},
		{Op{Kind: Collective, Block: "fs", Micro: 0}, "collective fs@0"},
		{Op{Kind: Send, Block: "f0", Micro: 3, Peer: 1, Tensor: "f0->f1@3", Tag: 5}, "send f0->f1@3 to 1 #5"},
		{Op{Kind: Recv, Block: "f1", Micro: 3, Peer: 0, Tensor: "f0->f1@3", Tag: 5}, "recv f0->f1@3 from 0 #5"},
		{Op{Kind: Wait, Block: "f0", Micro: 3, Peer: 1, Tensor: "f0->f1@3", Tag: 5}, "wait f0->f1@3 to 1 #5"},
		{Op{Kind: Wait, Block: "f1", Micro: 3, Peer: 0, Tensor: "f0->f1@3", Tag: 5}, "wait f0->f1@3 from 0 #5"},
	} {
		if got := tc.op.String(); got != tc.text {
			t.Errorf("%#v: String() = %q, want %q", tc.op, got, tc.text)
		}
		back, err := ParseOp(tc.text)
		if err != nil || back != tc.op {
			t.Errorf("ParseOp(%q) = %#v, %v; want %#v", tc.text, back, err, tc.op)
		}
	}
}

func TestParseOpErrors(t *testing.T) {
	for _, s := range []string{
		"", "run f0@1", "compute f0", "compute f0@-1", "compute @1 x",
		"send f0->f1@3 from 1 #5", "recv f0->f1@3 to 1 #5", "wait f0->f1@3 at 1 #5",
		"send f0f1@3 to 1 #5", "send f0->f1@x to 1 #5", "send f0->f1@3 to -1 #5", "send f0->f1@3 to 1 5",
		"send f0->f1@3 to 1 #-5", "send ->f1@3 to 1 #5",
	} {
		if op, err := ParseOp(s); err == nil {
			t.Errorf("ParseOp(%q) = %v, want an error", s, op)
		}
	}
}

func TestOpJSON(t *testing.T) {
	for _, tc := range []struct {
		json string
		err  string // substring; "" for valid
	}{
		{`{"op":"compute","block":"f0","micro":1}`, ""},
		{`{"op":"send","block":"f0","micro":1,"peer":1,"tensor":"f0->f1@1","tag":0}`, ""},
		{`{"op":"compute","block":"f0","micro":1,"peer":1}`, "apply only to"},
		{`{"op":"send","block":"f0","micro":1,"peer":1}`, "needs peer, tensor and tag"},
		{`{"op":"jump","block":"f0","micro":1}`, "unknown op"},
		{`{"op":"compute","micro":1}`, "no block"},
		{`{"op":"compute","block":"f0","micro":-1}`, "negative"},
		{`{"op":"compute","block":"f0","micro":1,"x":2}`, "unknown field"},
	} {
		var o Op
		err := o.UnmarshalJSON([]byte(tc.json))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.json, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, want an error with %q", tc.json, err, tc.err)
		case tc.err == "":
			back, err := o.MarshalJSON()
			if err != nil || string(back) != tc.json {
				t.Errorf("%s: marshals back to %s, %v", tc.json, back, err)
			}
		}
	}
}

// Every program of every built-in round-trips through its file and its
// text form, and the same schedule gives the same bytes.
func TestProgramRoundTrip(t *testing.T) {
	for _, c := range allBuiltins(t, 4) {
		s := greedy(t, c.p, 3)
		for _, mode := range Modes() {
			progs := generate(t, s, mode)
			again := generate(t, s, mode)
			for d, p := range progs {
				b, err := p.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				if b2, _ := again[d].Marshal(); !bytes.Equal(b, b2) {
					t.Errorf("%s %s device %d: two generations differ", c.label, mode, d)
				}
				back, err := ParseProgram(b)
				if err != nil {
					t.Fatalf("%s %s device %d: %v\n%s", c.label, mode, d, err, b)
				}
				if !reflect.DeepEqual(back, p) {
					t.Errorf("%s %s device %d: file does not round-trip", c.label, mode, d)
				}
				lines := strings.Split(strings.TrimSuffix(p.Text(), "\n"), "\n")[1:]
				if len(lines) != len(p.Ops) {
					t.Fatalf("%s: %d text lines for %d ops", c.label, len(lines), len(p.Ops))
				}
				for i, l := range lines {
					if o, err := ParseOp(l); err != nil || o != p.Ops[i] {
						t.Errorf("%s %s device %d op %d: %q parses to %v, %v", c.label, mode, d, i, l, o, err)
					}
				}
			}
		}
	}
}

func TestParseProgramErrors(t *testing.T) {
	s := greedy(t, builtin(t, "v-shape", 2, false), 1)
	good, err := generate(t, s, Blocking)[0].Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, err string }{
		{`"mode": "blocking"`, `"mode": "eager"`, "unknown mode"},
		{`"device": 0`, `"device": 2`, "out of range"},
		{`"micro_batches": 1`, `"micro_batches": 0`, "at least 1"},
		{`"placement"`, `"name"`, "unknown field"},
		{`"op":"send"`, `"op":"post"`, "unknown op"},
	} {
		bad := strings.Replace(string(good), tc.old, tc.new, 1)
		if bad == string(good) {
			t.Fatalf("%q not in the program", tc.old)
		}
		if _, err := ParseProgram([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s -> %s: got %v, want %q", tc.old, tc.new, err, tc.err)
		}
	}
	if _, err := ParseProgram(append(good, "{}"...)); err == nil {
		t.Error("trailing data accepted")
	}
}
