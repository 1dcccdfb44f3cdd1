package baseline

import (
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
