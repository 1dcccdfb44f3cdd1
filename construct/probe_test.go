package construct

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// probe orders the window's candidates by the makespan their pace
// between two windows gives at N, not by the window's makespan; one it
// cannot measure comes last.
func TestProbe(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	const w, n = 48, 10000
	// ending is a schedule of m micro-batches that ends at end: one
	// forward instance starting then (probe reads makespans only).
	ending := func(m, end int) *schedule.Schedule {
		return &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: m}, Instances: []schedule.Instance{{Block: 0, Micro: 0, Start: end - p.Blocks[0].Time}}}
	}
	paced := func(name string, first, pace int) Entry {
		s := ending(w, first)
		return Entry{Name: name, Schedule: s, Makespan: schedule.Makespan(s), build: func(_ context.Context, m int) (*schedule.Schedule, error) {
			return ending(m, first+(m-w)*pace), nil
		}}
	}
	unmeasured := Entry{Name: "no build", Schedule: ending(w, 90), Makespan: 90}
	es := []Entry{unmeasured, paced("first on the window, slower", 100, 30), paced("later on the window, faster", 120, 29)}
	got := probe(context.Background(), es, w, n)
	want := []string{"later on the window, faster", "first on the window, slower", "no build"}
	for k, e := range got {
		if e.Name != want[k] {
			t.Fatalf("probe order %d: %s, want %s", k, e.Name, want[k])
		}
	}
}
