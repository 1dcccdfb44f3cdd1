package fsdpplan_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/fsdpplan"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// built is baseline name on a built-in placement.
func built(t *testing.T, name string, opt placement.Options, n int) *schedule.Schedule {
	t.Helper()
	p, err := placement.Builtin("v-shape", opt)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := baseline.Lookup(name)
	if !ok {
		t.Fatalf("no baseline %q", name)
	}
	s, err := b.Build(spec.New(p, n))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// model shards every forward block's stage alike.
func model(s *schedule.Schedule, maxActive, params, gather, reduce int) fsdp.Model {
	f := &fsdp.File{Model: fsdp.Model{MaxActive: maxActive, Per: fsdp.PerIteration}, Every: &fsdp.Stage{Params: params, Gather: gather, Reduce: reduce}}
	return f.For(s.Placement)
}

// A 4-stage plan (interleaved 1F1B: two ranks, two stages each, eight
// micro-batches) sharded with max_active_stages 1 and 2: tessel's
// placement verifies, counts the gathered parameters in the peak, and is
// no worse than PyTorch's "full" and "auto" on the same costs.
func TestFourStages(t *testing.T) {
	s := built(t, "1f1b-interleaved", placement.Options{Devices: 2, Chunks: 2, Order: placement.Loop}, 8)
	base := schedule.Measure(s)
	for _, maxActive := range []int{1, 2} {
		m := model(s, maxActive, 5, 2, 3)
		res, err := fsdpplan.Search(context.Background(), s, m, fsdpplan.Options{})
		if err != nil {
			t.Fatalf("max_active_stages %d: %v", maxActive, err)
		}
		if err := fsdpplan.Verify(res.Best); err != nil {
			t.Fatalf("max_active_stages %d: %v", maxActive, err)
		}
		for d, pk := range res.Best.Peak {
			if pk < base.PeakMemory[d]+5 {
				t.Errorf("max_active_stages %d: rank %d peak %d does not count a gathered stage (5) over the activations' %d", maxActive, d, pk, base.PeakMemory[d])
			}
			if pk > base.PeakMemory[d]+5*maxActive {
				t.Errorf("max_active_stages %d: rank %d peak %d above activations %d + %d gathered stages", maxActive, d, pk, base.PeakMemory[d], maxActive)
			}
		}
		if len(res.Compared) != 3 {
			t.Fatalf("compared %v", res.Compared)
		}
		tessel := res.Compared[2]
		for _, c := range res.Compared[:2] {
			if tessel.Makespan > c.Makespan || tessel.Makespan == c.Makespan && tessel.Peak > c.Peak {
				t.Errorf("max_active_stages %d: tessel %+v worse than PyTorch's %+v", maxActive, tessel, c)
			}
		}
		// The bounds of the spec sharding m: the rule's argument (fsdp.Bound)
		// with the spec's own.
		bd, err := fsdp.Bound(s, m)
		if err != nil {
			t.Fatal(err)
		}
		sharded := s.Spec
		sharded.Sharding = m.Sharding()
		lb := rules.LowerBounds(sharded).Makespan
		if lb < bd.Makespan || lb < rules.LowerBounds(s.Spec).Makespan {
			t.Errorf("bound %d below the rule's %d or the spec's own", lb, bd.Makespan)
		}
		if res.Best.Makespan < lb {
			t.Errorf("makespan %d below the bound %d", res.Best.Makespan, lb)
		}
		t.Logf("max_active_stages %d: %+v (bound %d, compute alone %d)", maxActive, res.Compared, lb, base.Makespan)
	}
}

// The verifier (verify.Schedule, which runs the rule with the others)
// rejects, naming the stage, a compute on a stage whose parameters are
// not gathered.
func TestVerifierNamesStage(t *testing.T) {
	s := built(t, "1f1b-interleaved", placement.Options{Devices: 2, Chunks: 2, Order: placement.Loop}, 4)
	m := model(s, 2, 1, 1, 1)
	fs, err := fsdpplan.PyTorch(s, m, fsdp.Lookahead{Policy: "full"})
	if err != nil {
		t.Fatal(err)
	}
	// Drop rank 1's first UNSHARD.
	bad := *fs.Compute
	bad.Shards = append([][]schedule.ShardOp(nil), fs.Compute.Shards...)
	ops := fs.Compute.Shards[1]
	var first schedule.ShardOp
	for i, op := range ops {
		if op.Kind == string(fsdp.Unshard) {
			first = op
			bad.Shards[1] = append(append([]schedule.ShardOp(nil), ops[:i]...), ops[i+1:]...)
			break
		}
	}
	err = verify.Schedule(&bad)
	var ve *schedule.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("want a violation, got %v", err)
	}
	name := "stage " + strconv.Itoa(first.Stage) + " (" + m.Stages[first.Stage].Forward + ")"
	if v := ve.Violations[0]; v.Kind != schedule.Sharded || v.Device != 1 || !strings.Contains(v.Message, name) || !strings.Contains(v.Message, "not gathered") {
		t.Errorf("violation %+v, want one on rank 1 naming %s not gathered", v, name)
	}
	// Without the spec's sharding the actions are refused too.
	plain := *fs.Compute
	plain.Sharding = nil
	if err := verify.Schedule(&plain); err == nil || !strings.Contains(err.Error(), "shards no stage") {
		t.Errorf("actions without sharding: %v", err)
	}
}
