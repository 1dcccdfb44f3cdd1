package schedule_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

func TestSteadyText(t *testing.T) {
	const n = 12
	pairs := &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("a"), MicroBatches: n}}
	for m := range n {
		pairs.Instances = append(pairs.Instances, schedule.Instance{Block: 0, Micro: m, Start: m/2*3 + m%2})
	}
	phases := &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("a", "b"), MicroBatches: n}}
	for m := range n {
		phases.Instances = append(phases.Instances, schedule.Instance{Block: 0, Micro: m, Start: m}, schedule.Instance{Block: 1, Micro: m, Start: n + m})
	}
	one := &schedule.Schedule{Spec: spec.Spec{Placement: chainOnOne("a"), MicroBatches: 1}, Instances: []schedule.Instance{{Block: 0, Micro: 0, Start: 0}}}
	for _, c := range []struct {
		name string
		s    *schedule.Schedule
		want string
	}{
		{"pairs", pairs, "period 3 for 2 micro-batches, N_R "},
		{"phases", phases, " over 2 periodic stretches one after another: a every 1, "},
		{"none", one, "none found: "},
	} {
		if got := schedule.SteadyText(c.s); !strings.Contains(got, c.want) {
			t.Errorf("%s: SteadyText = %q, want it to hold %q", c.name, got, c.want)
		}
	}
}

func TestSteadyNotSoughtNamesTheLimit(t *testing.T) {
	if want := fmt.Sprintf(" more than %d instances ", schedule.SteadyLimit); !strings.Contains(schedule.SteadyNotSought, want) {
		t.Errorf("SteadyNotSought %q does not say %q", schedule.SteadyNotSought, want)
	}
}
