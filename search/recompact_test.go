package search

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// recompact keeps a repetend that still repeats and drops one that does
// not; it never lengthens a schedule.
func TestRecompactKeepsOrDropsRepetend(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	ps, err := construct.Modulo(context.Background(), p, construct.ModuloOptions{Memory: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ps.Schedule(spec.Spec{Placement: p, MicroBatches: 16, Memory: 4})
	if err != nil {
		t.Fatal(err)
	}
	c, err := recompact(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Repetend == nil || schedule.Makespan(c) != schedule.Makespan(s) {
		t.Errorf("compacting a compact schedule: repetend %v, makespan %d → %d", c.Repetend, schedule.Makespan(s), schedule.Makespan(c))
	}
	// Delay one instance in the middle: the schedule is still valid but
	// no longer periodic; compaction restores it.
	late := *s
	late.Instances = append([]schedule.Instance(nil), s.Instances...)
	late.Repetend = nil
	for x, in := range late.Instances {
		if in.Micro == 15 && p.Blocks[in.Block].ID == "b0" {
			late.Instances[x].Start += 5
		}
	}
	if err := verify.Schedule(&late); err != nil {
		t.Fatal(err)
	}
	c, err = recompact(&late)
	if err != nil {
		t.Fatal(err)
	}
	if schedule.Makespan(c) != schedule.Makespan(s) {
		t.Errorf("compaction: makespan %d, want %d", schedule.Makespan(c), schedule.Makespan(s))
	}
}
