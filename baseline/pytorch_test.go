package baseline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// TestZB1PTimed pins PyTorch's ScheduleInterleavedZeroBubble order (Qi et
// al., "Zero Bubble Pipeline Parallelism", ZB1P) timed with F:I:W =
// 3:4:2 on 8 ranks × 2 stages, N = 16: its makespan is 323.
func TestZB1PTimed(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 8, Chunks: 2, Order: placement.Loop, SplitBackward: true, ForwardTime: 3, InputTime: 4, WeightTime: 2})
	for _, c := range []struct{ n, want int }{{16, 323}, {8, 179}, {32, 611}} {
		s, err := ZB1P(p, c.n, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := schedule.Makespan(s); got != c.want {
			t.Errorf("N = %d: makespan %d, want %d", c.n, got, c.want)
		}
	}
	// 4 ranks, N = 8, F:I:W = 1:2:1: 70.
	p = placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.Loop, SplitBackward: true, ForwardTime: 1, InputTime: 2, WeightTime: 1})
	if s, err := ZB1P(p, 8, 0); err != nil || schedule.Makespan(s) != 70 {
		t.Errorf("4 ranks, N = 8, F:I:W = 1:2:1: %v, want makespan 70", err)
	}
}

// TestLoopedBFSOrder pins ScheduleLoopedBFS's order as PyTorch writes it
// (_calculate_single_rank_operations): on 2 ranks × 2 stages with N = 2,
// rank 0 runs 0F0 0F1 2F0 2F1 2B1 2B0 0B1 0B0 and rank 1 the same with
// stages 1 and 3.
func TestLoopedBFSOrder(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, Chunks: 2, Order: placement.Loop})
	s, err := LoopedBFS(p, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for d, want := range []string{"f0.0 f0.1 f2.0 f2.1 b2.1 b2.0 b0.1 b0.0", "f1.0 f1.1 f3.0 f3.1 b3.1 b3.0 b1.1 b1.0"} {
		var got []string
		for _, r := range schedule.Orders(s)[d] {
			got = append(got, fmt.Sprintf("%s.%d", p.Blocks[r.Block].ID, r.Micro))
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("rank %d: %s, want %s", d, g, want)
		}
	}
}
