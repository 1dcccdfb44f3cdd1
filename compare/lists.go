package compare

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxListValues is the most values ParseList and ParseRange return: a
// sweep's axis, each value a point searched.
const MaxListValues = 64

// ParseList reads the values of a sweep's axis (tessel sweep --latency's
// --micro-batches and --latency-budget): "a,b,c" (ascending), "A-B" or
// "A-B/STEP", into ascending distinct values ≥ min, at most
// MaxListValues of them. The error is one line naming the text.
func ParseList(s string, min int) ([]int, error) {
	bad := func() ([]int, error) {
		return nil, fmt.Errorf("want numbers a,b,c, a range A-B or A-B/STEP, each at least %d, got %q", min, s)
	}
	var xs []int
	if strings.Contains(s, ",") || !strings.Contains(s, "-") {
		for _, part := range strings.Split(s, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || v < min || (len(xs) > 0 && v <= xs[len(xs)-1]) {
				return bad()
			}
			xs = append(xs, v)
		}
	} else {
		rng, stepText, hasStep := strings.Cut(s, "/")
		lo, hi, _ := strings.Cut(rng, "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		step, err3 := 1, error(nil)
		if hasStep {
			step, err3 = strconv.Atoi(strings.TrimSpace(stepText))
		}
		if err1 != nil || err2 != nil || err3 != nil || a < min || b < a || step < 1 {
			return bad()
		}
		for x := a; x <= b && len(xs) <= MaxListValues; x += step {
			xs = append(xs, x)
		}
	}
	if len(xs) > MaxListValues {
		return nil, fmt.Errorf("%q has more than %d values", s, MaxListValues)
	}
	return xs, nil
}

// ParseRange reads the values of a figure's axis (tessel sweep's --nr and
// --memory): "A-B" or "A" into A..B, every value ≥ min, at most
// MaxListValues of them. The error is one line naming the text.
func ParseRange(s string, min int) ([]int, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	if !isRange {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("want a number or a range A-B, got %q", s)
	}
	if a < min || b < a {
		return nil, fmt.Errorf("want %d ≤ A ≤ B, got %q", min, s)
	}
	if b-a >= MaxListValues {
		return nil, fmt.Errorf("%q has more than %d values", s, MaxListValues)
	}
	xs := make([]int, 0, b-a+1)
	for x := a; x <= b; x++ {
		xs = append(xs, x)
	}
	return xs, nil
}
