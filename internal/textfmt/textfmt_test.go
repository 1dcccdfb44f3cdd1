package textfmt

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Pct(0.25), "25.00%"},
		{Budget(0), "unlimited"},
		{Budget(6), "6"},
		{Ints([]int{4, 3, 2}), "[4 3 2]"},
		{YesNo(true), "yes"},
		{OptFloat(nil, 6), ""},
		{OptFloat(Ptr(0.5), 2), "0.50"},
		{OptInt(Ptr(3)), "3"},
		{OptBool(Ptr(false)), "false"},
		{Ext("markdown"), "md"},
		{Ext("table"), "txt"},
		{Ext("csv"), "csv"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if Round6(1.0000004) != 1 || Secs(1500*time.Millisecond) != 1.5 {
		t.Errorf("Round6 or Secs")
	}
	var b bytes.Buffer
	if err := Table(&b, "markdown", []string{"a", "b"}, [][]string{{"1", "2"}}); err != nil || b.Len() == 0 {
		t.Errorf("markdown table: %v %q", err, b.String())
	}
	plain, err := Plain([]string{"mode", "makespan"}, [][]string{{"blocking", "12"}})
	if err != nil || plain != "MODE      MAKESPAN\nblocking  12\n" {
		t.Errorf("plain table %q, %v", plain, err)
	}
}

func TestCommaInts(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{{nil, "[]"}, {[]int{4}, "[4]"}, {[]int{4, 3, -2}, "[4, 3, -2]"}} {
		if got := CommaInts(c.in); got != c.want {
			t.Errorf("CommaInts(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSafeWriter(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain ascii\n\ttab", "plain ascii\n\ttab"},
		{"box ─┬─ and ≤ × …", "box ─┬─ and ≤ × …"},
		{"v\x1b]0;pwned\a-shape", `v\x1b]0;pwned\a-shape`},
		{"cr\roverwrite", `cr\roverwrite`},
		{"del\x7f c1\u009b[2J", `del\x7f c1\u009b[2J`},
		{"bad \xff byte", `bad \xff byte`},
	} {
		if got := SafeText(c.in); got != c.want {
			t.Errorf("SafeText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A rune split between two writes passes whole; a C1 control split
	// so is escaped whole.
	var b strings.Builder
	w := NewSafeWriter(&b)
	for _, part := range []string{"a\xe2\x94", "\x80b\xc2", "\x9bc\xe2"} {
		if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", part, n, err)
		}
	}
	w.Flush()
	if got, want := b.String(), `a─b\u009bc\xe2`; got != want {
		t.Errorf("split writes: %q, want %q", got, want)
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"s.json", "s.json"},
		{`dir "a"\b ≤`, `dir "a"\b ≤`},
		{"x\n--evil 1\n#.json", `x\n--evil 1\n#.json`},
		{"esc\x1b \"q\" \xff", `esc\x1b \"q\" \xff`},
	} {
		if got := OneLine(c.in); got != c.want {
			t.Errorf("OneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPythonString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tt/schedule.csv", `"tt/schedule.csv"`},
		{"tt\n\ndef evil():\n#/schedule.csv", `"tt\n\ndef evil():\n#/schedule.csv"`},
		{`a"b\c"""`, `"a\"b\\c\"\"\""`},
		{"bell\a esc\x1b nul\x00 cr\r", `"bell\x07 esc\x1b nul\x00 cr\r"`},
		{"nbsp\u00a0 ls\u2028 é ≤", `"nbsp\xa0 ls\u2028 é ≤"`},
		{"bad \xff\xed\xa0\x80", `"bad \udcff\udced\udca0\udc80"`},
	} {
		if got := PythonString(c.in); got != c.want {
			t.Errorf("PythonString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	// Where nothing needs escaping, it is Go's quoting, which the
	// torchtitan settings used before.
	for _, s := range []string{"", "/tmp/tessel-titan/schedule.csv", "ZBVZeroBubble", "layers.0 ü"} {
		if got, want := PythonString(s), strconv.Quote(s); got != want {
			t.Errorf("PythonString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"out/run-1", "out/run-1"},
		{"my dir", "'my dir'"},
		{"it's; rm -rf ~", `'it'\''s; rm -rf ~'`},
		{"$(reboot)", "'$(reboot)'"},
		{"", "''"},
	} {
		if got := ShellQuote(c.in); got != c.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
