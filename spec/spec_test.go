package spec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

func TestCheck(t *testing.T) {
	v := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	infer := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, Inference: true})
	for _, tc := range []struct {
		name    string
		sp      spec.Spec
		want    string // "" for no error
		latency bool   // the error is ErrLatency
	}{
		{"fine", spec.Spec{Placement: v, MicroBatches: 8, Memory: 4}, "", false},
		{"no micro-batches", spec.New(v, 0), "0 micro-batches, want at least 1", false},
		{"offload", spec.Spec{Placement: v, MicroBatches: 1, Allowed: spec.Decisions{Offload: true}}, "offload asked for", false},
		{"recompute, none declared", spec.Spec{Placement: v, MicroBatches: 1, Allowed: spec.Decisions{Recompute: true}}, "no block may be recomputed", false},
		{"recompute", spec.Spec{Placement: v.WithRecompute(), MicroBatches: 1, Allowed: spec.Decisions{Recompute: true}}, "", false},
		{"latency below the critical path", spec.Spec{Placement: infer, MicroBatches: 1, Latency: 3}, "below the critical path 4", true},
		{"latency negative", spec.Spec{Placement: infer, MicroBatches: 1, Latency: -1}, "is negative", true},
		{"latency met", spec.Spec{Placement: infer, MicroBatches: 1, Latency: 4}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sp.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			case err != nil && errors.Is(err, spec.ErrLatency) != tc.latency:
				t.Fatalf("%v: errors.Is(ErrLatency) = %v", err, !tc.latency)
			}
		})
	}
}

func TestOnCluster(t *testing.T) {
	v := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	c := &cluster.Cluster{Devices: []cluster.Device{{Speed: 1, Memory: 3}, {Speed: 0.5}}}
	sp, err := spec.OnCluster(c, v, 4)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Given != v || sp.Cluster != c || sp.MicroBatches != 4 {
		t.Fatalf("spec %+v", sp)
	}
	if sp.Placement == v || sp.Placement.Blocks[1].Time != 2*v.Blocks[1].Time {
		t.Errorf("block on the half-speed device: time %d, given %d", sp.Placement.Blocks[1].Time, v.Blocks[1].Time)
	}
	sp.Memory = 5
	if got := []int{sp.Budget(0), sp.Budget(1)}; got[0] != 3 || got[1] != 5 {
		t.Errorf("budgets %v, want [3 5]: the least of the device's memory and the budget", got)
	}
	if _, err := spec.OnCluster(c, placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}), 1); err == nil {
		t.Error("a cluster of 2 devices applied to a placement of 4")
	}
	if got := sp.WithMicroBatches(9); got.MicroBatches != 9 || sp.MicroBatches != 4 {
		t.Errorf("WithMicroBatches: %d, and the original %d", got.MicroBatches, sp.MicroBatches)
	}
}
