package construct

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
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
			s, err := LatencyList(spec.Spec{Placement: p, MicroBatches: 16, Latency: budget})
			if err != nil {
				t.Errorf("%s, budget %d: %v", shape, budget, err)
				continue
			}
			if s.Latency != budget || verify.Schedule(s) != nil {
				t.Errorf("%s, budget %d: budget %d recorded, verify %v", shape, budget, s.Latency, verify.Schedule(s))
			}
		}
		if _, err := LatencyList(spec.Spec{Placement: p, MicroBatches: 4, Latency: cp - 1}); err == nil {
			t.Errorf("%s: budget below the critical path accepted", shape)
		}
		cands, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Latency: cp + 1})
		if err != nil || len(cands) == 0 {
			t.Fatalf("%s: portfolio: %v", shape, err)
		}
		for _, c := range cands {
			if schedule.MeasureLatency(c.Schedule).Max > cp+1 || verify.Schedule(c.Schedule) != nil {
				t.Errorf("%s: %s over the budget", shape, c.Name)
			}
		}
	}
}

// TestLatencyListChannels: with links that carry one transfer at a time,
// the latency list schedule and the portfolio re-timed under the budget
// meet it (transfers queued in their producers' order, as the verifier
// times them), at the critical path and above it.
func TestLatencyListChannels(t *testing.T) {
	for _, shape := range []string{"v-shape", "x-shape", "m-shape", "nn-shape", "k-shape"} {
		for _, c := range []int{1, 3} {
			p, err := placement.Builtin(shape, placement.Options{Devices: 4, Inference: true})
			if err != nil {
				t.Fatal(err)
			}
			p.Transfers = map[placement.Dep]int{}
			for _, d := range p.Deps {
				if !p.Shares(d.From, d.To) {
					p.Transfers[d] = c
				}
			}
			p.QueuedLinks = true
			cp := p.CriticalPath()
			for _, budget := range []int{cp, cp + 1, cp + 3} {
				s, err := LatencyList(spec.Spec{Placement: p, MicroBatches: 16, Latency: budget})
				if err != nil {
					t.Errorf("%s, transfers %d, budget %d: %v", shape, c, budget, err)
					continue
				}
				if s.Latency != budget || verify.Schedule(s) != nil {
					t.Errorf("%s, transfers %d, budget %d: budget %d recorded, verify %v", shape, c, budget, s.Latency, verify.Schedule(s))
				}
			}
			cands, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Latency: cp + 1})
			if err != nil || len(cands) == 0 {
				t.Fatalf("%s, transfers %d: portfolio: %v", shape, c, err)
			}
			for _, cd := range cands {
				if schedule.MeasureLatency(cd.Schedule).Max > cp+1 || verify.Schedule(cd.Schedule) != nil {
					t.Errorf("%s, transfers %d: %s over the budget", shape, c, cd.Name)
				}
			}
		}
	}
}

// TestLatencyListLanes: where device pairs have several links (a cluster's
// lanes, each a queue of its own), the latency list schedule books one
// queue of the least time per pair, which the lanes never deliver later
// than: its schedule meets the budget and verifies.
func TestLatencyListLanes(t *testing.T) {
	c, err := cluster.Load("../testdata/clusters/four-two-links.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range []string{"v-shape", "m-shape", "nn-shape", "k-shape"} {
		p0, err := placement.Builtin(shape, placement.Options{Devices: 4, Inference: true})
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.Apply(p0)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Lanes) == 0 || !p.QueuedLinks {
			t.Fatalf("%s: no lanes on the cluster", shape)
		}
		cp := p.CriticalPath()
		for _, budget := range []int{cp, cp + 2, cp + 5} {
			s, err := LatencyList(spec.Spec{Placement: p, MicroBatches: 12, Latency: budget})
			if err != nil {
				t.Errorf("%s, budget %d: %v", shape, budget, err)
				continue
			}
			if s.Latency != budget || verify.Schedule(s) != nil {
				t.Errorf("%s, budget %d: budget %d recorded, verify %v", shape, budget, s.Latency, verify.Schedule(s))
			}
		}
	}
}
