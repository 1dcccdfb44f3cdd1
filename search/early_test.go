package search

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// A search with decisions above earlyFrom micro-batches and a deadline
// publishes a verified baseline before its constructions; a later
// publication replaces it only where it ends no later; without a
// deadline, or at earlyFrom micro-batches, nothing is published early.
func TestPublishEarly(t *testing.T) {
	p, err := placement.Load(filepath.Join("testdata", "llama7b-24gb.json"))
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.Spec{Placement: p, MicroBatches: earlyFrom + 1, Memory: 150, Allowed: spec.Decisions{Recompute: true}}
	deadline, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		n    int
		want bool
	}{
		{"deadline", deadline, earlyFrom + 1, true},
		{"no deadline", context.Background(), earlyFrom + 1, false},
		{"at earlyFrom", deadline, earlyFrom, false},
	} {
		s := sp
		s.MicroBatches = tc.n
		inc := &incumbent{}
		st := &state{sp: s, inc: inc, t0: time.Now(), res: &Result{Decisions: true}}
		st.publishEarly(tc.ctx)
		if (inc.best != nil) != tc.want {
			t.Fatalf("%s: published %v, want %v", tc.name, inc.best != nil, tc.want)
		}
		if !tc.want {
			continue
		}
		early := inc.best.Schedule
		if err := verify.Schedule(early); err != nil || early.MicroBatches != tc.n || early.Memory != 150 {
			t.Fatalf("%s: early schedule of %d micro-batches under %d: %v", tc.name, early.MicroBatches, early.Memory, err)
		}
		if inc.best.Source.Kind != SourceBaseline || len(st.res.Contenders) != 0 || st.res.Schedule != nil {
			t.Errorf("%s: early answer %+v entered the result", tc.name, inc.best.Source)
		}
		longer := *early
		longer.Instances = append([]schedule.Instance(nil), early.Instances...)
		for i := range longer.Instances {
			longer.Instances[i].Start++
		}
		inc.publish(&Result{Schedule: &longer}, st.t0)
		if inc.best.Schedule != early {
			t.Errorf("%s: a schedule ending later replaced the early answer", tc.name)
		}
		inc.publish(&Result{Schedule: early}, st.t0)
		if inc.best.Schedule != early || inc.early {
			t.Errorf("%s: a schedule ending no later did not replace the early answer", tc.name)
		}
	}
}
