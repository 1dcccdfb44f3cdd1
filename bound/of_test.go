package bound_test

import (
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// probe is a rule that records the steps Of runs it at and raises the
// makespan at one step to a given value.
type probe struct {
	on    bool
	at    bound.Step
	raise int
	seen  *[]bound.Step
}

const probeBy bound.MakespanBound = "the probe"

func (r probe) On(spec.Spec) bool { return r.on }

func (r probe) Bound(_ spec.Spec, at bound.Step, b *bound.Bounds) {
	*r.seen = append(*r.seen, at)
	if at == r.at {
		b.Raise(r.raise, probeBy)
	}
}

// Of runs a rule's arguments at every step in order (only at Loads
// without micro-batches, never where the spec does not switch it on),
// and the first argument to reach the bound names it: a rule at Loads
// and at Path before the devices' loads, at Devices and Given after
// them.
func TestOfSteps(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	sp := spec.New(p, 8)
	plain := bound.Of(sp, nil) // {4 44 a device's load}; critical path 16
	if plain.By != bound.BoundDeviceLoad || plain.Makespan != 44 {
		t.Fatalf("v-shape, 8 micro-batches: %+v", plain)
	}
	for _, tc := range []struct {
		name  string
		n     int
		on    bool
		at    bound.Step
		raise int
		want  bound.Bounds
		steps []bound.Step
	}{
		{"off", 8, false, bound.Loads, 100, plain, nil},
		{"no micro-batches", 0, true, bound.Given, 100, bound.Bounds{Period: 4, By: bound.BoundCriticalPath}, []bound.Step{bound.Loads}},
		{"above all at Given", 8, true, bound.Given, 100, bound.Bounds{Period: 4, Makespan: 100, By: probeBy}, nil},
		{"a tie at Loads is the rule's", 8, true, bound.Loads, 44, bound.Bounds{Period: 4, Makespan: 44, By: probeBy}, nil},
		{"a tie at Path is the rule's (before the devices)", 8, true, bound.Path, 44, bound.Bounds{Period: 4, Makespan: 44, By: probeBy}, nil},
		{"a tie at Devices is the device's", 8, true, bound.Devices, 44, plain, nil},
		{"a tie at Given is the device's", 8, true, bound.Given, 44, plain, nil},
	} {
		var seen []bound.Step
		r := probe{on: tc.on, at: tc.at, raise: tc.raise, seen: &seen}
		got := bound.Of(spec.New(p, tc.n), []bound.Rule{r})
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		want := tc.steps
		if want == nil && tc.on {
			want = []bound.Step{bound.Loads, bound.Path, bound.Devices, bound.Given}
		}
		if !slices.Equal(seen, want) {
			t.Errorf("%s: steps %v, want %v", tc.name, seen, want)
		}
	}
}

// relaxer doubles every block's time and turns itself off: Of divides
// the relaxed bounds by 2 again, and runs Given on the spec as given.
type relaxer struct{ seen *[]int }

func (relaxer) On(sp spec.Spec) bool { return sp.Placement.Name != "relaxed" }

func (relaxer) Relax(sp spec.Spec) (spec.Spec, int) {
	q := sp.Placement.Clone()
	q.Name = "relaxed"
	for i := range q.Blocks {
		q.Blocks[i].Time *= 2
	}
	sp.Placement = q
	return sp, 2
}

func (r relaxer) Bound(sp spec.Spec, at bound.Step, _ *bound.Bounds) {
	if at == bound.Given {
		*r.seen = append(*r.seen, sp.Placement.Blocks[0].Time)
	}
}

func TestOfRelaxes(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	var seen []int
	got := bound.Of(spec.New(p, 8), []bound.Rule{relaxer{&seen}})
	if want := bound.Of(spec.New(p, 8), nil); got != want {
		t.Errorf("relaxed by 2 and back: %+v, want %+v", got, want)
	}
	if len(seen) != 1 || seen[0] != p.Blocks[0].Time {
		t.Errorf("Given ran on block times %v, want once on the spec as given (%d)", seen, p.Blocks[0].Time)
	}
}
