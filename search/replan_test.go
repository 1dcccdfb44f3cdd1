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

// Replan on a cluster with one slow link: the old orders and the old
// repetend are starts, so the new schedule, verified, ends no later than
// the old orders on the new cluster.
func TestReplan(t *testing.T) {
	ctx := context.Background()
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	old, err := Run(ctx, spec.Spec{Placement: p, MicroBatches: 8, Memory: 4}, Options{})
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
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if res.OldOrders == nil || res.Makespan() > *res.OldOrders {
		t.Errorf("makespan %d, the old orders %v", res.Makespan(), res.OldOrders)
	}
	started := false
	for _, cd := range res.Contenders {
		started = started || cd.Source == (Source{Kind: SourceStart, Name: StartOldOrders})
	}
	if !started {
		t.Errorf("the old orders are not among the candidates: %v", res.Contenders)
	}
}

// The warm start pays (Wu et al., "Rethinking Dynamic Networks and
// Heterogeneous Computing with Automatic Parallelization", §3: replanning
// when a link's time changes must be quicker than planning afresh):
// nn-shape on 4 devices, memory 6, N = 16, searched with every transfer
// 1, then link 1–2 slows tenfold. The replan is within 2% of a fresh
// search's makespan and makes fewer solver calls (at this size, 4 against
// 7, a tenth of the time).
func TestReplanWithinTwoPercentWithLessWork(t *testing.T) {
	ctx := context.Background()
	p := placementtest.Builtin(t, "nn-shape", placement.Options{Devices: 4})
	oc := cluster.Uniform(4)
	oc.Default = cluster.Link{Latency: 1}
	op, err := oc.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	const memory, n = 6, 16
	old, err := Run(ctx, spec.Spec{Placement: op, MicroBatches: n, Memory: memory}, Options{Strategy: repetend.StrategyJoint})
	if err != nil {
		t.Fatal(err)
	}
	old.Schedule.Cluster, old.Schedule.Given = oc, p
	c, err := cluster.Load("../testdata/clusters/four-slow-link.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	re, err := Replan(ctx, old.Schedule, q, c, ReplanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(re.Schedule); err != nil {
		t.Fatal(err)
	}
	fresh, err := Run(ctx, spec.Spec{Placement: q, MicroBatches: n, Memory: memory}, Options{Strategy: repetend.StrategyJoint})
	if err != nil {
		t.Fatal(err)
	}
	if r, f := re.Makespan(), fresh.Makespan(); 100*r > 102*f {
		t.Errorf("replan makespan %d, more than 2%% above the fresh search's %d", r, f)
	}
	if r, f := re.SolverChecks(), fresh.SolverChecks(); r >= f {
		t.Errorf("replan made %d solver calls, the fresh search %d", r, f)
	}
}
