package schedule

// FindRepetend looks for the longest stretch of s that repeats exactly:
// a period P and, for every block i, a micro-batch n_i from which
// B_i^{n_i+k} starts at start(B_i^{n_i}) + k·P for k < Iterations, the
// iteration k starting within [T + k·P, T + (k+1)·P) for one time T. It
// returns nil when no stretch of at least two iterations exists. The
// schedule must be valid; the result passes Verify's repetend check by
// construction (callers attach it and verify as usual).
//
// A schedule built without a repetend (a list schedule, a baseline) often
// has one in its steady state; naming it lets renderings mark it and
// readers see the period the schedule reaches.
func FindRepetend(s *Schedule) *Repetend {
	if s == nil || s.Placement == nil || s.MicroBatches < 3 {
		return nil
	}
	n, k := s.MicroBatches, len(s.Placement.Blocks)
	start := make([][]int, k)
	for i := range start {
		start[i] = make([]int, n)
		for m := range start[i] {
			start[i][m] = -1
		}
	}
	for _, in := range s.Instances {
		if in.Block < 0 || in.Block >= k || in.Micro < 0 || in.Micro >= n {
			return nil
		}
		start[in.Block][in.Micro] = in.Start
	}
	// The period: the most common gap between consecutive micro-batches
	// of a block, the smallest on a tie.
	count := map[int]int{}
	for i := range start {
		for m := 0; m+1 < n; m++ {
			if start[i][m] < 0 || start[i][m+1] < 0 {
				return nil
			}
			count[start[i][m+1]-start[i][m]]++
		}
	}
	P, best := 0, 0
	for d, c := range count {
		if d > 0 && (c > best || (c == best && d < P)) {
			P, best = d, c
		}
	}
	if P == 0 {
		return nil
	}
	// For every block, the micro-batches of its longest run of gaps P:
	// lo[i]..hi[i] start exactly P apart.
	lo, hi := make([]int, k), make([]int, k)
	for i := range start {
		a := 0
		for m := 1; m <= n; m++ {
			if m == n || start[i][m]-start[i][m-1] != P {
				if m-1-a > hi[i]-lo[i] {
					lo[i], hi[i] = a, m-1
				}
				a = m
			}
		}
		if hi[i] == lo[i] {
			return nil
		}
	}
	// Every start of a block in its run is a candidate T; iteration 0
	// takes from each block the instance starting in [T, T+P).
	var out *Repetend
	for _, T := range start[0][lo[0] : hi[0]+1] {
		offsets := make([]int, k)
		iters, first := n, -1
		for i := range start {
			// The instance of block i in [T, T+P), within its run.
			m := lo[i] + floorDiv(T-start[i][lo[i]]+P-1, P)
			if m < lo[i] || m > hi[i] || start[i][m] >= T+P {
				iters = 0
				break
			}
			offsets[i] = m
			iters = min(iters, hi[i]-m+1)
			if first < 0 || start[i][m] < first {
				first = start[i][m]
			}
		}
		if iters >= 2 && (out == nil || iters > out.Iterations) {
			nr := 0
			for _, o := range offsets {
				nr = max(nr, o+1)
			}
			out = &Repetend{NR: nr, Period: P, Offsets: offsets, Start: first, Iterations: iters}
		}
	}
	return out
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
