package search

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Options.Start: a given schedule joins the candidates under its name, the
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
	start, _ := baseline.GPipe(spec.New(q, n)) // over device 0's budget: built without it
	start.Placement = q
	_, err = Run(context.Background(), spec.Spec{Placement: q, MicroBatches: n}, Options{Start: []Start{{Name: "gpipe", Schedule: start}}})
	if err == nil || !strings.Contains(err.Error(), `start "gpipe"`) {
		t.Fatalf("a start over a device's budget: %v", err)
	}
	ok, err := baseline.OneFOneB(spec.New(p, n))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), spec.Spec{Placement: q, MicroBatches: n}, Options{Start: []Start{{Name: "other", Schedule: ok}}}); err == nil {
		t.Fatal("a start of another placement was taken")
	}
	res, err := Run(context.Background(), spec.Spec{Placement: q, MicroBatches: n}, Options{RefineEffort: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if peak := schedule.Measure(res.Schedule).PeakMemory[0]; peak > 3 {
		t.Errorf("device 0 peaks at %d over its capacity 3", peak)
	}
	again, err := Run(context.Background(), spec.Spec{Placement: q, MicroBatches: n}, Options{RefineEffort: -1, Start: []Start{{Name: "previous", Schedule: res.Schedule}}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Makespan() > res.Makespan() || again.Contenders[0].Source.Name != "previous" {
		t.Errorf("from a start of %d: %d, candidates %v", res.Makespan(), again.Makespan(), again.Contenders)
	}
}

// Start.Repetend: a repetend found on one cluster is re-timed on another
// (one link slower). With the constructions left out it joins the candidates
// and is the solver's incumbent, which the answer never loses to. In a
// quick search (every solver call capped, the repetend's schedule not
// refined, as tessel replan runs it) it is left out where its offsets
// cannot beat the modulo schedule's period (m-shape, the link ten times
// slower: the search stays within 2% of a fresh one), and kept where the
// solver finds nothing shorter from it (x-shape, the link twice as slow).
func TestSearchStartsFromARepetend(t *testing.T) {
	ctx := context.Background()
	setting := func(name string, memory, n int, slow float64) (old *Result, q *placement.Placement) {
		p, err := placement.Builtin(name, placement.Options{Devices: 4})
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
		old, err = Run(ctx, spec.Spec{Placement: on(0), MicroBatches: n, Memory: memory}, Options{RefineEffort: -1})
		if err != nil {
			t.Fatal(err)
		}
		if old.Schedule.Repetend == nil {
			// A construction that meets the lower bound (m-shape: the
			// bound with the blocks on all devices cut out) need not
			// show its repetend; the search's own is the old plan's.
			if old.Repetend == nil {
				t.Fatalf("%s: the old search has no repetend", name)
			}
			named := *old.Schedule
			named.Repetend = &schedule.Repetend{NR: old.Repetend.NR, Period: old.Repetend.Period, Offsets: old.Repetend.Offsets}
			old.Schedule = &named
		}
		return old, on(slow)
	}
	started := func(res *Result) (int, bool) {
		for _, s := range res.Contenders {
			if s.Source.Name == "old" {
				return s.Makespan, true
			}
		}
		return 0, false
	}
	quickly := func(start []Start) Options {
		return Options{Start: start, Effort: 50_000, PhaseEffort: 50_000, RefineEffort: 50_000, RefineGreedyOnly: true}
	}

	const n, memory = 32, 6
	old, q := setting("m-shape", memory, n, 10)
	rp := old.Schedule.Repetend
	start := []Start{{Name: "old", Repetend: rp}}
	alone, err := Run(ctx, spec.Spec{Placement: q, MicroBatches: n, Memory: memory}, Options{SolverOnly: true, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	retimed, err := repetend.Retime(ctx, spec.Spec{Placement: q, Memory: memory, MicroBatches: n}, repetend.Assignment{NR: rp.NR, Offsets: rp.Offsets}, repetend.PeriodOptions{})
	if err != nil || retimed == nil {
		t.Fatalf("retime: %v %v", retimed, err)
	}
	ms, ok := started(alone)
	if !ok || alone.Search == nil || alone.Repetend.Period > retimed.Period || alone.Makespan() > ms {
		t.Errorf("from the old repetend (period %d, makespan %d): period %d, makespan %d, search %v, candidates %v", retimed.Period, ms, alone.Repetend.Period, alone.Makespan(), alone.Search, alone.Contenders)
	}
	fresh, err := Run(ctx, spec.Spec{Placement: q, MicroBatches: n, Memory: memory}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt := quickly(start)
	quick, err := Run(ctx, spec.Spec{Placement: q, MicroBatches: n, Memory: memory}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(quick.Schedule); err != nil {
		t.Fatal(err)
	}
	if _, ok := started(quick); ok {
		t.Errorf("the old repetend, whose bound %d is above the modulo schedule's period, was re-timed: %v", repetend.PeriodBound(q, rp.Offsets), quick.Contenders)
	}
	if quick.Makespan()*100 > fresh.Makespan()*102 {
		t.Errorf("quick search from the old repetend: %d, fresh search: %d", quick.Makespan(), fresh.Makespan())
	}
	// The period bound under memory (rules.LowerBounds) proves this
	// repetend's period now, and its phases are proven: whether proven
	// or not, the repetend's schedule is not refined.
	if quick.Source.Kind == SourceRepetend && quick.Refined.Steps > 0 {
		t.Errorf("the repetend's schedule was refined (%+v) under RefineGreedyOnly", quick.Refined)
	}

	old, q = setting("x-shape", 4, 16, 2)
	rp = old.Schedule.Repetend
	opt = quickly([]Start{{Name: "old", Repetend: rp}})
	kept, err := Run(ctx, spec.Spec{Placement: q, MicroBatches: 16, Memory: 4}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := started(kept); !ok || kept.Source != (Source{Kind: SourceRepetend}) || kept.Repetend.NR != rp.NR || fmt.Sprint(kept.Repetend.Offsets) != fmt.Sprint(rp.Offsets) {
		t.Errorf("x-shape: built by %s from %+v, candidates %v; want the old repetend's offsets %v", kept.Source, kept.Repetend, kept.Contenders, rp.Offsets)
	}
}
