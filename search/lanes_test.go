package search

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Device pairs with several links (Wu et al., "Rethinking Dynamic Networks
// and Heterogeneous Computing with Automatic Parallelization", §3.1, eq 7),
// each carrying one transfer at a time: v-shape on 4 devices whose
// neighbours have two links each (every transfer 6, longer than a block,
// so one link per pair queues). The search's schedule verifies under the
// rule (each transfer on the link where it ends first), and ends no later
// than with one link per pair.
func TestSearchTwoLinksPerPair(t *testing.T) {
	ctx := context.Background()
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	two, err := cluster.Load("../testdata/clusters/four-two-links.json")
	if err != nil {
		t.Fatal(err)
	}
	one := two.Clone()
	for n := range one.Pairs {
		one.Pairs[n].More = nil
	}
	var makespans []int
	for _, c := range []*cluster.Cluster{two, one} {
		q, err := c.Apply(p)
		if err != nil {
			t.Fatal(err)
		}
		if (len(q.Lanes) > 0) != (c == two) {
			t.Fatalf("lanes %v", q.Lanes)
		}
		res, err := Run(ctx, spec.Spec{Placement: q, MicroBatches: 16, Memory: 8}, Options{Strategy: repetend.StrategyJoint, Effort: 50_000, PhaseEffort: 50_000, RefineEffort: 50_000})
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(res.Schedule); err != nil {
			t.Fatal(err)
		}
		if res.Makespan() < res.Bounds.Makespan {
			t.Errorf("makespan %d below the lower bound %d", res.Makespan(), res.Bounds.Makespan)
		}
		makespans = append(makespans, res.Makespan())
	}
	if makespans[0] > makespans[1] {
		t.Errorf("two links per pair: %d, one: %d", makespans[0], makespans[1])
	}
	t.Logf("makespan with two links per pair %d, one %d", makespans[0], makespans[1])
}
