package plan

import (
	"context"
	"errors"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/verify"
)

func gptSplit(t *testing.T) *partition.Report {
	t.Helper()
	g, err := partition.Load("../testdata/models/gpt-like.json")
	if err != nil {
		t.Fatal(err)
	}
	g.Accelerators = 4
	pr, err := partition.Run(context.Background(), g, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// The plan's schedule is of the split's placement, verified, for the
// micro-batches and budget asked; a cluster the placement does not fit
// and a decision it cannot take are errors of the input.
func TestRun(t *testing.T) {
	pr := gptSplit(t)
	res, err := Run(context.Background(), pr, Options{MicroBatches: 8, Budget: 6})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Search.Schedule
	if err := verify.Schedule(s); err != nil || s.MicroBatches != 8 || s.Memory != 6 || res.Placement.Name != pr.Converted.Placement.Name {
		t.Errorf("schedule: %v, %d micro-batches, memory %d, placement %s", err, s.MicroBatches, s.Memory, res.Placement.Name)
	}
	// The model's memory: each device's budget is what its stages leave.
	if res.Budget != 6 || res.Decisions || len(res.Memory) != 4 {
		t.Fatalf("result %+v", res)
	}
	for d, m := range res.Memory {
		if got := res.Placement.Budget(d, 6); got != min(6, m.Budget) {
			t.Errorf("device %d: budget %d, want the least of 6 and its memory's %d", d, got, m.Budget)
		}
	}
	two := cluster.Uniform(2)
	var ie *InputError
	if _, err := Run(context.Background(), pr, Options{MicroBatches: 8, Cluster: two}); !errors.As(err, &ie) || !ie.Cluster {
		t.Errorf("a cluster of 2 devices for 4 stages: %v", err)
	}
	if _, err := Run(context.Background(), pr, Options{MicroBatches: 8, Decisions: placement.Decisions{Offload: true}}); !errors.As(err, &ie) || ie.Cluster {
		t.Errorf("offload without an offload time: %v", err)
	}
}
