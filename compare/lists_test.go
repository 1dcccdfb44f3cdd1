package compare

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // fmt of the list, or "error"
	}{
		{"8", "[8]"},
		{"1,2,4", "[1 2 4]"},
		{"5-9", "[5 6 7 8 9]"},
		{"140-200/20", "[140 160 180 200]"},
		{"0", "[0]"},
		{"2,1", "error"},
		{"1-", "error"},
		{"a", "error"},
		{"9-5", "error"},
		{"1-100", "error"},
		{"1-10/0", "error"},
		{"-3", "error"},
	} {
		got, err := ParseList(tc.in, 0)
		s := fmt.Sprint(got)
		if err != nil {
			s = "error"
		}
		if s != tc.want {
			t.Errorf("ParseList(%q) = %s (%v), want %s", tc.in, s, err, tc.want)
		}
	}
}

// FuzzParseList: any text gives a list of at most 64 ascending values at
// least min, or a one-line error; never a panic.
func FuzzParseList(f *testing.F) {
	for _, seed := range []string{"8", "1,2,4,8,16,32,64", "5-9", "140-400/20", "0", "2,1", "1-", "-", "1-10/0", "1--2", ",,"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		xs, err := ParseList(s, 1)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
			return
		}
		if len(xs) == 0 || len(xs) > 64 {
			t.Fatalf("%q: %d values", s, len(xs))
		}
		for i, x := range xs {
			if x < 1 || (i > 0 && x <= xs[i-1]) {
				t.Fatalf("%q: %v", s, xs)
			}
		}
	})
}

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"1-4", []int{1, 2, 3, 4}, false},
		{" 3 - 5 ", []int{3, 4, 5}, false},
		{"6", []int{6}, false},
		{"0-3", nil, true},
		{"5-3", nil, true},
		{"a-b", nil, true},
		{"1-100", nil, true},
		{"", nil, true},
	} {
		got, err := ParseRange(c.in, 1)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseRange(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}
