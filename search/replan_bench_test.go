package search

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// The replan case of Wu et al., "Rethinking Dynamic Networks and
// Heterogeneous Computing with Automatic Parallelization" (§3, a link's
// time changing under a running job): m-shape on two nodes of 4 devices,
// device 5 at half speed, memory 8, N = 32 (the old schedule, searched by
// tessel search on two-nodes-8-slow5.json, is in testdata); then the link
// between the nodes' devices 3 and 4 slows tenfold (latency 4 → 40,
// two-nodes-8-slow5-slow-link.json).
func replanCase(tb testing.TB) (old *schedule.Schedule, p *placement.Placement, c *cluster.Cluster) {
	tb.Helper()
	old, err := schedule.Load("testdata/replan-m-shape-8-old.json")
	if err != nil {
		tb.Fatal(err)
	}
	c, err = cluster.Load("../testdata/clusters/two-nodes-8-slow5-slow-link.json")
	if err != nil {
		tb.Fatal(err)
	}
	p, err = c.Apply(old.Given)
	if err != nil {
		tb.Fatal(err)
	}
	return old, p, c
}

// BenchmarkReplanSlowLink is tessel replan --no-fresh on the case above;
// BenchmarkFreshSlowLink the fresh tessel search it is measured against.
func BenchmarkReplanSlowLink(b *testing.B) {
	old, p, c := replanCase(b)
	b.ResetTimer()
	for range b.N {
		res, err := Replan(context.Background(), old, p, c, ReplanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Makespan()), "makespan")
	}
}

func BenchmarkFreshSlowLink(b *testing.B) {
	old, p, _ := replanCase(b)
	b.ResetTimer()
	for range b.N {
		res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: old.MicroBatches, Memory: old.Memory}, Options{Strategy: repetend.StrategyJoint})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Makespan()), "makespan")
	}
}
