package baseline

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// TestZB1PTimed pins PyTorch's ScheduleInterleavedZeroBubble order (Qi et
// al., "Zero Bubble Pipeline Parallelism", ZB1P) timed with F:I:W =
// 3:4:2 on 8 ranks × 2 stages, N = 16: its makespan is 323.
func TestZB1PTimed(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 8, Chunks: 2, Order: placement.Loop, SplitBackward: true, ForwardTime: 3, InputTime: 4, WeightTime: 2})
	for _, c := range []struct{ n, want int }{{16, 323}, {8, 179}, {32, 611}} {
		s, err := ZB1P(spec.New(p, c.n))
		if err != nil {
			t.Fatal(err)
		}
		if got := schedule.Makespan(s); got != c.want {
			t.Errorf("N = %d: makespan %d, want %d", c.n, got, c.want)
		}
	}
	// 4 ranks, N = 8, F:I:W = 1:2:1: 70.
	p = placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.Loop, SplitBackward: true, ForwardTime: 1, InputTime: 2, WeightTime: 1})
	if s, err := ZB1P(spec.New(p, 8)); err != nil || schedule.Makespan(s) != 70 {
		t.Errorf("4 ranks, N = 8, F:I:W = 1:2:1: %v, want makespan 70", err)
	}
}

// TestLoopedBFSOrder pins ScheduleLoopedBFS's order as PyTorch writes it
// (_calculate_single_rank_operations): on 2 ranks × 2 stages with N = 2,
// rank 0 runs 0F0 0F1 2F0 2F1 2B1 2B0 0B1 0B0 and rank 1 the same with
// stages 1 and 3.
func TestLoopedBFSOrder(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, Chunks: 2, Order: placement.Loop})
	s, err := LoopedBFS(spec.New(p, 2))
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

// TestZB1POrders pins ZB1P's order to PyTorch's ScheduleInterleavedZeroBubble
// (its _calculate_single_rank_operations and _get_1f1b_rank_ops with
// enable_zero_bubble, run for 2 and 4 ranks, 2 and 3 stages per rank, 4 and
// 8 micro-batches): one line per rank, "<stage><F|I|W><micro-batch>".
func TestZB1POrders(t *testing.T) {
	data, err := os.ReadFile("testdata/zb1p-orders.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		head, want, _ := strings.Cut(line, ":")
		var ranks, v, n, rank int
		if _, err := fmt.Sscanf(head, "%d %d %d %d", &ranks, &v, &n, &rank); err != nil {
			t.Fatalf("%q: %v", head, err)
		}
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: ranks, Chunks: v, Order: placement.Loop, SplitBackward: true})
		s, err := ZB1P(spec.New(p, n))
		if err != nil {
			t.Fatalf("%s: %v", head, err)
		}
		var got strings.Builder
		for _, r := range schedule.Orders(s)[rank] {
			id := p.Blocks[r.Block].ID
			fmt.Fprintf(&got, " %s%s%d", id[1:], map[byte]string{'f': "F", 'i': "I", 'w': "W"}[id[0]], r.Micro)
		}
		if got.String() != want {
			t.Errorf("%s:\n got%s\nwant%s", head, got.String(), want)
		}
		lines++
	}
	if lines == 0 {
		t.Fatal("no orders in testdata")
	}
}
