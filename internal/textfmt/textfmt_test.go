package textfmt

import (
	"bytes"
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
