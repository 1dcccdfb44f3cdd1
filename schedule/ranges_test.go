package schedule

import "testing"

func TestRanges(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want string
	}{
		{nil, ""},
		{[]int{4}, "4"},
		{[]int{0, 1, 2, 3, 5, 7, 8, 9}, "0-3 5 7-9"},
		{[]int{1, 3}, "1 3"},
	} {
		if got := ranges(c.xs); got != c.want {
			t.Errorf("ranges(%v) = %q, want %q", c.xs, got, c.want)
		}
	}
}
