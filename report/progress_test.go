package report

import "testing"

func TestProgressShow(t *testing.T) {
	var got []string
	Progress(func(line string) { got = append(got, line) }).Show("sweep: %d of %d points", 2, 5)
	if len(got) != 1 || got[0] != "sweep: 2 of 5 points" {
		t.Fatalf("Show handed %q", got)
	}
	var none Progress
	none.Show("nothing %d", 1) // a nil Progress takes nothing, and does not panic
}
