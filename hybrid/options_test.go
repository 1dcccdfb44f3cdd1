package hybrid

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"1", []int{1}, false},
		{"1, 2,4", []int{1, 2, 4}, false},
		{"0", nil, true},
		{"1,,2", nil, true},
		{"x", nil, true},
		{"", nil, true},
	} {
		got, err := ParseSizes(c.in)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

// FuzzParseSizes: any text gives sizes ≥ 1 or a one-line error; never a
// panic.
func FuzzParseSizes(f *testing.F) {
	for _, seed := range []string{"1", "1,2,4", " 8 ", "0", "1,,2", "-1", "x", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		xs, err := ParseSizes(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
			return
		}
		for _, x := range xs {
			if x < 1 {
				t.Fatalf("%q: %v", s, xs)
			}
		}
	})
}

func TestChunksUpTo(t *testing.T) {
	if got := ChunksUpTo(1); got != nil {
		t.Errorf("ChunksUpTo(1) = %v, want nil", got)
	}
	if got := ChunksUpTo(3); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("ChunksUpTo(3) = %v, want [1 2 3]", got)
	}
}

func TestKeepDegrees(t *testing.T) {
	if KeepDegrees(0, 0, 0) != nil {
		t.Error("KeepDegrees(0, 0, 0) is not nil")
	}
	keep := KeepDegrees(2, 0, 4)
	for _, c := range []struct {
		dp, tp, pp int
	}{{2, 1, 4}, {2, 8, 4}, {1, 1, 4}, {2, 1, 2}} {
		want := c.dp == 2 && c.pp == 4
		if got := keep(c.dp, c.tp, c.pp); got != want {
			t.Errorf("keep(%d, %d, %d) = %v, want %v", c.dp, c.tp, c.pp, got, want)
		}
	}
}
