package compact_test

import (
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// TestCompactPairs compacts DualPipe-V's overlapped pairs (rule/pairs's
// Merge: each pair one variable) back to the same schedule, and names
// each kind of bad pair as the compaction's error.
func TestCompactPairs(t *testing.T) {
	p0 := placementtest.Builtin(t, "v-shape", placement.Options{Chunks: 2, Order: placement.V, SplitBackward: true})
	ov, err := placement.ParseOverlapTime("0.7x")
	if err != nil {
		t.Fatal(err)
	}
	p, err := p0.WithOverlap(ov)
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.New(p, 8)
	var s *schedule.Schedule
	for _, b := range baseline.All() {
		if b.Name == "dualpipe-v-overlap" {
			if s, err = b.Build(sp); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s == nil || len(s.Pairs) == 0 {
		t.Fatal("dualpipe-v-overlap built no pairs")
	}
	c, err := compact.Compact(sp, compact.Keep{Orders: schedule.Orders(s), Pairs: s.Pairs})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Instances, s.Instances; len(got) != len(want) {
		t.Fatalf("%d instances, want %d", len(got), len(want))
	} else {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("instance %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	q := s.Pairs[0]
	sameMicro := q
	sameMicro.Backward.Micro = q.Forward.Micro
	outOfRange := q
	outOfRange.Forward.Micro, outOfRange.Backward.Micro = 8, 9
	name := func(r schedule.Ref) string { return fmt.Sprintf("%s^%d", p.Blocks[r.Block].ID, r.Micro) }
	chans := placementtest.WithTransfers(p.Clone(), 1, true)
	for _, tc := range []struct {
		name  string
		p     *placement.Placement
		pairs []schedule.Pair
		want  string
	}{
		{"twice", p, append([]schedule.Pair{q}, s.Pairs...), "compact: " + name(q.Forward) + " is in two pairs"},
		{"one micro-batch", p, []schedule.Pair{sameMicro}, "compact: pair " + name(sameMicro.Forward) + "+" + name(sameMicro.Backward) + ": one micro-batch"},
		{"out of range", p, []schedule.Pair{outOfRange}, "compact: pair " + name(outOfRange.Forward) + "+" + name(outOfRange.Backward) + ": micro-batch out of range"},
		{"channels", chans, s.Pairs, "compact: overlapped pairs on a cluster with channels: not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compact.Compact(spec.New(tc.p, 8), compact.Keep{Orders: schedule.Orders(s), Pairs: tc.pairs})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
