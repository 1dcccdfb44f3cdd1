package completion

import (
	"context"
	"strings"
	"testing"

	"tessel/baseline"
	"tessel/cluster"
	"tessel/placement"
	"tessel/repetend"
	"tessel/schedule"
)

// Options.Start: a given schedule joins the seeds under its name, the
// search returns nothing worse, and a schedule of another setting is
// refused. On a cluster with per-device memories the answer verifies
// against each device's budget.
func TestSearchStartsFrom(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.Uniform(4)
	c.Default.Latency = 1
	c.Devices[0].Memory = 3 // below 1F1B's 4 on device 0
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	start, _ := baseline.GPipe(q, n, 0) // over device 0's budget: built without it
	start.Placement = q
	_, err = Search(context.Background(), q, Options{MicroBatches: n, Start: []Start{{Name: "gpipe", Schedule: start}}})
	if err == nil || !strings.Contains(err.Error(), `start "gpipe"`) {
		t.Fatalf("a start over a device's budget: %v", err)
	}
	ok, err := baseline.OneFOneB(p, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Search(context.Background(), q, Options{MicroBatches: n, Start: []Start{{Name: "other", Schedule: ok}}}); err == nil {
		t.Fatal("a start of another placement was taken")
	}
	res, err := Search(context.Background(), q, Options{MicroBatches: n, RefineEffort: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := schedule.Verify(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if peak := schedule.Measure(res.Schedule).PeakMemory[0]; peak > 3 {
		t.Errorf("device 0 peaks at %d over its capacity 3", peak)
	}
	again, err := Search(context.Background(), q, Options{MicroBatches: n, RefineEffort: -1, Start: []Start{{Name: "previous", Schedule: res.Schedule}}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Makespan() > res.Makespan() || again.Seeds[0].Name != "previous" {
		t.Errorf("from a start of %d: %d, seeds %v", res.Makespan(), again.Makespan(), again.Seeds)
	}
}

// Start.Repetend: a repetend found on one cluster is re-timed on another
// (one link ten times slower), its schedule joins the seeds, and with the
// constructions left out it is the solver's incumbent, which the answer
// never loses to. A quick search from it (every solver call capped, as
// tessel replan runs it) stays within 2% of a fresh search.
func TestSearchStartsFromARepetend(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	on := func(slow float64) *placement.Placement {
		c := cluster.Uniform(4)
		c.Default.Latency = 1
		if slow > 0 {
			c.Pairs = []cluster.Pair{{From: 1, To: 2, Link: cluster.Link{Latency: slow}}}
		}
		q, err := c.Apply(p)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	const n, memory = 32, 6
	ctx := context.Background()
	old, err := Search(ctx, on(0), Options{Memory: memory, MicroBatches: n, RefineEffort: -1})
	if err != nil {
		t.Fatal(err)
	}
	rp := old.Schedule.Repetend
	if rp == nil {
		t.Fatal("the old schedule names no repetend")
	}
	q := on(10)
	start := []Start{{Name: "old", Repetend: rp}}
	seeded := func(res *Result) int {
		for _, s := range res.Seeds {
			if s.Name == "old" {
				return s.Makespan
			}
		}
		t.Fatalf("the old repetend is not among the seeds %v", res.Seeds)
		return 0
	}

	alone, err := Search(ctx, q, Options{Memory: memory, MicroBatches: n, SolverOnly: true, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	retimed, err := repetend.Retime(ctx, q, rp.NR, rp.Offsets, memory, n, 0, 0)
	if err != nil || retimed == nil {
		t.Fatalf("retime: %v %v", retimed, err)
	}
	if alone.Search == nil || alone.Repetend.Period > retimed.Period || alone.Makespan() > seeded(alone) {
		t.Errorf("from the old repetend (period %d, makespan %d): period %d, makespan %d, search %v", retimed.Period, seeded(alone), alone.Repetend.Period, alone.Makespan(), alone.Search)
	}

	fresh, err := Search(ctx, q, Options{Memory: memory, MicroBatches: n})
	if err != nil {
		t.Fatal(err)
	}
	quick, err := Search(ctx, q, Options{Memory: memory, MicroBatches: n, Start: start, Effort: 50_000, PhaseEffort: 50_000, RefineEffort: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := schedule.Verify(quick.Schedule); err != nil {
		t.Fatal(err)
	}
	seeded(quick)
	if quick.Makespan()*100 > fresh.Makespan()*102 {
		t.Errorf("quick search from the old repetend: %d, fresh search: %d", quick.Makespan(), fresh.Makespan())
	}
}
