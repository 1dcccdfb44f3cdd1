package search

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Replan on a cluster with one slow link: the old orders and the old
// repetend are starts, so the new schedule, verified, ends no later than
// the old orders on the new cluster.
func TestReplan(t *testing.T) {
	ctx := context.Background()
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	old, err := Run(ctx, p, Options{Memory: 4, MicroBatches: 8})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Load("../testdata/clusters/four-slow-link.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replan(ctx, old.Schedule, q, c, ReplanOptions{Effort: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if err := schedule.Verify(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if res.OldOrders == nil || res.Makespan() > *res.OldOrders {
		t.Errorf("makespan %d, the old orders %v", res.Makespan(), res.OldOrders)
	}
	started := false
	for _, cd := range res.Candidates {
		started = started || cd.Source == (Source{Kind: SourceStart, Name: StartOldOrders})
	}
	if !started {
		t.Errorf("the old orders are not among the candidates: %v", res.Candidates)
	}
}
