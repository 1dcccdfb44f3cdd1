package construct

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// TestLatencyList: the list schedule that delays a micro-batch's first
// block until it finishes within the budget (the Tessel paper's §VI-D
// budget) meets it on every inference shape, at the critical path and
// above it, and a budget below the critical path is an error.
func TestLatencyList(t *testing.T) {
	for _, shape := range []string{"v-shape", "x-shape", "m-shape", "nn-shape", "k-shape"} {
		p, err := placement.Builtin(shape, placement.Options{Devices: 4, Inference: true})
		if err != nil {
			t.Fatal(err)
		}
		cp := p.CriticalPath()
		for _, budget := range []int{cp, cp + 1, cp + 3} {
			s, err := LatencyList(p, 16, 0, budget)
			if err != nil {
				t.Errorf("%s, budget %d: %v", shape, budget, err)
				continue
			}
			if s.Latency != budget || schedule.Verify(s) != nil {
				t.Errorf("%s, budget %d: budget %d recorded, verify %v", shape, budget, s.Latency, schedule.Verify(s))
			}
		}
		if _, err := LatencyList(p, 4, 0, cp-1); err == nil {
			t.Errorf("%s: budget below the critical path accepted", shape)
		}
		cands, err := LatencyPortfolio(context.Background(), p, PortfolioOptions{MicroBatches: 8}, cp+1)
		if err != nil || len(cands) == 0 {
			t.Fatalf("%s: portfolio: %v", shape, err)
		}
		for _, c := range cands {
			if schedule.MeasureLatency(c.Schedule).Max > cp+1 || schedule.Verify(c.Schedule) != nil {
				t.Errorf("%s: %s over the budget", shape, c.Name)
			}
		}
	}
}
