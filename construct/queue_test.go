package construct

import (
	mrand "math/rand/v2"
	"testing"
)

// devQueue.pick returns what a scan of one queue in the rule's order
// returns — the first instance, not stale, whose own conditions hold
// and whose class can start — over random pushes and picks in which the
// instances' and the classes' states change between picks.
func TestDevQueuePickIsScan(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	for trial := range 200 {
		const classes = 6
		n := 40
		prio := rng.Perm(n) // the rule's order: a total order
		less := func(x, y int) bool { return prio[x] < prio[y] }
		class := func(x int) int { return x % classes }
		q := newDevQueue(classes, less)
		var naive []int // the same instances, scanned in order
		pushed := make([]bool, n)
		stale := make([]bool, n)
		ready := make([]bool, n)
		fits := make([]bool, classes)
		for step := range 200 {
			if x := rng.IntN(n); !pushed[x] {
				pushed[x] = true
				q.push(x, class(x))
				naive = append(naive, x)
			}
			for x := range n {
				ready[x] = rng.IntN(3) > 0
				if rng.IntN(20) == 0 {
					stale[x] = true
				}
			}
			for c := range fits {
				fits[c] = rng.IntN(2) == 0
			}
			want, kept := -1, naive[:0:0]
			for _, x := range naive {
				if stale[x] {
					continue
				}
				if want < 0 || less(x, want) {
					if ready[x] && fits[class(x)] {
						if want >= 0 {
							kept = append(kept, want)
						}
						want = x
						continue
					}
				}
				kept = append(kept, x)
			}
			naive = kept
			got := q.pick(class, func(x int) bool { return stale[x] }, func(x int) bool { return ready[x] },
				func(x int) bool { return ready[x] && fits[class(x)] })
			if got != want {
				t.Fatalf("trial %d, step %d: pick %d, scan %d", trial, step, got, want)
			}
		}
	}
}
