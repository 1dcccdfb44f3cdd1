package choose_test

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/coarsen"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// CheckedTarget: the automatic target for a graph of more than AutoBlocks
// operators with candidates (She et al. solve graphs "typically fewer
// than 100 nodes"), a given count, and the values --coarsen refuses.
func TestCheckedTarget(t *testing.T) {
	big := placementtest.DAG(t, 200, 2)
	for _, c := range []struct {
		flag, want int
	}{{-1, coarsen.DefaultTarget}, {0, 0}, {30, 30}} {
		if got, err := choose.CheckedTarget(big, c.flag); err != nil || got != c.want {
			t.Errorf("--coarsen %d: %d, %v; want %d", c.flag, got, err, c.want)
		}
	}
	if _, err := choose.CheckedTarget(big, -2); err == nil {
		t.Error("--coarsen -2: no error")
	}
	pinned, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := choose.CheckedTarget(pinned, 10); err == nil {
		t.Error("--coarsen 10 on a pinned placement: no error")
	}
	if got, err := choose.CheckedTarget(pinned, -1); err != nil || got != 0 {
		t.Errorf("--coarsen -1 on a pinned placement: %d, %v; want 0", got, err)
	}
}

// Fresh searches a placement afresh for an old schedule's micro-batches
// and budget, as tessel search does: on a cluster with one slow link, and
// with the devices chosen for a placement whose blocks give candidates.
func TestFresh(t *testing.T) {
	ctx := context.Background()
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	old, err := search.Run(ctx, spec.Spec{Placement: p, MicroBatches: 8, Memory: 4}, search.Options{})
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
	fresh, err := choose.Fresh(ctx, q, old.Schedule, search.ReplanOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(fresh.Schedule); err != nil || fresh.Schedule.MicroBatches != 8 || fresh.Schedule.Memory != 4 {
		t.Errorf("fresh search: %v, %d micro-batches, memory %d", err, fresh.Schedule.MicroBatches, fresh.Schedule.Memory)
	}
	open := placementtest.DAG(t, 8, 2)
	chosen, err := choose.Devices(ctx, spec.New(open, 2), choose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err = choose.Fresh(ctx, open, chosen.Schedule, search.ReplanOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(fresh.Schedule); err != nil || !fresh.Assigned || fresh.Schedule.Placement.Open() {
		t.Errorf("fresh search of a placement with candidates: %v, devices chosen %v", err, fresh.Assigned)
	}
}
