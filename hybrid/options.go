package hybrid

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSizes reads the micro-batch sizes of Options.MicroBatchSizes from
// "B,...", each a whole number of samples ≥ 1 (tessel plan
// --micro-batch-sizes). The error is one line naming the bad item.
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(item))
		if err != nil || b < 1 {
			return nil, fmt.Errorf("%q is not a size ≥ 1 (B,... in samples)", item)
		}
		out = append(out, b)
	}
	return out, nil
}

// ChunksUpTo is Options.Chunks for at most c stages per device: every
// count from 1 to c, and nil (one stage per device, the default) for
// c ≤ 1.
func ChunksUpTo(c int) []int {
	if c <= 1 {
		return nil
	}
	out := make([]int, 0, c)
	for v := 1; v <= c; v++ {
		out = append(out, v)
	}
	return out
}

// KeepDegrees is Options.Degrees keeping the layouts of data-, tensor-
// and pipeline-parallel degrees dp, tp and pp (each 0: any); nil, every
// layout, when all three are 0.
func KeepDegrees(dp, tp, pp int) func(dp, tp, pp int) bool {
	if dp == 0 && tp == 0 && pp == 0 {
		return nil
	}
	return func(d, t, p int) bool {
		return (dp == 0 || d == dp) && (tp == 0 || t == tp) && (pp == 0 || p == pp)
	}
}
