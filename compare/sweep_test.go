package compare

import (
	"reflect"
	"testing"
)

// TestCarryForward: a point stopped by the time limit takes the better
// rate of the point before it; proven points keep their own.
func TestCarryForward(t *testing.T) {
	r := func(v float64) *float64 { return &v }
	pts := []Point{
		{X: 2, BubbleRate: r(0.4), Period: 10, NR: 3, Proven: true},
		{X: 3, BubbleRate: nil, Proven: false},                       // found nothing in time
		{X: 4, BubbleRate: r(0.5), Period: 12, NR: 2, Proven: false}, // found worse in time
		{X: 5, BubbleRate: r(0.1), Period: 7, NR: 5, Proven: false},  // found better
		{X: 6, BubbleRate: r(0), Period: 6, NR: 6, Proven: true},
	}
	carryForward(pts)
	var got []float64
	for _, pt := range pts {
		got = append(got, *pt.BubbleRate)
	}
	if want := []float64{0.4, 0.4, 0.4, 0.1, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("rates %v, want %v", got, want)
	}
	if pts[2].Period != 10 || pts[2].NR != 3 || pts[2].Proven {
		t.Errorf("point 4: period %d N_R %d proven %v, want the carried 10, 3, not proven", pts[2].Period, pts[2].NR, pts[2].Proven)
	}
}
