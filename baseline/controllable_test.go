package baseline

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// TestControllableOrders pins V-Min and V-Half (Qi et al., "Pipeline
// Parallelism with Controllable Memory", §4.2) to the orders the authors'
// greedy scheduler (sail-sg/zero-bubble-pipeline-parallelism, zbv_greedy,
// schedule_from_pattern) writes for each device: testdata holds its output
// for 2, 3, 4 and 8 devices and 8 and 16 micro-batches, one line per
// device, F f B b W w being chunk 0's and chunk 1's forwards, chunk 1's and
// chunk 0's input gradients and their weight gradients.
func TestControllableOrders(t *testing.T) {
	f, err := os.Open("testdata/controllable-orders.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var kind string
		var L, n, dev int
		head, want, _ := strings.Cut(sc.Text(), ":")
		if _, err := fmt.Sscanf(head, "%s %d %d %d", &kind, &L, &n, &dev); err != nil {
			t.Fatalf("%q: %v", head, err)
		}
		block := vMinBlock
		if kind == "half" {
			block = vHalfBlock
		}
		passes, err := controllablePasses(block, L, n)
		if err != nil {
			t.Fatalf("%s: %v", head, err)
		}
		var got strings.Builder
		for _, p := range passes[dev] {
			fmt.Fprintf(&got, " %c%d", "FfBbWw"[p.pass], p.micro)
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

// TestControllableMemory: V-Half holds about half of 1F1B's activations
// and V-Min about a third (Qi et al., "Pipeline Parallelism with
// Controllable Memory", §4.2: on the V placement ZB-V holds 2L activations
// of one chunk per device, V-Half about L and V-Min about 2L/3, plus a
// constant; the authors' orders give L+2 and at most 2L/3+3 for 4 to 16
// devices).
func TestControllableMemory(t *testing.T) {
	for _, L := range []int{4, 6, 8, 16} {
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: L, Chunks: 2, Order: placement.V, SplitBackward: true})
		n := 4 * L
		for _, c := range []struct {
			build func(spec.Spec) (*schedule.Schedule, error)
			most  int
		}{{VHalf, L + 2}, {VMin, 2*L/3 + 3}} {
			s, err := c.build(spec.New(p, n))
			if err != nil {
				t.Fatal(err)
			}
			peak := 0
			for _, m := range schedule.Measure(s).PeakMemory {
				peak = max(peak, m)
			}
			if peak > c.most {
				t.Errorf("%d devices: peak %d activations, want at most %d", L, peak, c.most)
			}
		}
	}
}
