package runtimegen_test

// Schedules from every producer — the time-optimal search and every
// baseline — run through the generated programs without deadlock, and with
// free communication they take exactly their schedule's makespan
// (Reference: §IV-D). An external test package, so that runtimegen itself
// imports only placement and schedule.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

func TestEveryProducerRunsWithoutDeadlock(t *testing.T) {
	for _, name := range placement.BuiltinNames() {
		for _, infer := range []bool{false, true} {
			p, err := placement.Builtin(name, placement.Options{Inference: infer})
			if err != nil {
				t.Fatal(err)
			}
			var scheds []*schedule.Schedule
			var labels []string
			opt, err := search.Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 3}, search.OptimalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			to := opt.Schedule
			scheds, labels = append(scheds, to), append(labels, "time-optimal")
			for _, m := range baseline.All() {
				s, err := m.Build(spec.New(p, 8))
				if errors.Is(err, baseline.ErrNotApplicable) {
					continue
				}
				if err != nil && !errors.Is(err, baseline.ErrOverBudget) {
					t.Fatalf("%s %s: %v", p.Name, m.Name, err)
				}
				scheds, labels = append(scheds, s), append(labels, m.Name)
			}
			for k, s := range scheds {
				label := fmt.Sprintf("%s/%s", p.Name, labels[k])
				if err := verify.Schedule(s); err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				for _, mode := range []runtimegen.Mode{runtimegen.Blocking, runtimegen.NonBlocking} {
					progs, err := runtimegen.Generate(s, mode)
					if err != nil {
						t.Fatalf("%s: %v", label, err)
					}
					res, err := runtimegen.Simulate(progs, 0)
					if err != nil {
						t.Fatalf("%s %v: %v", label, mode, err)
					}
					if mode == runtimegen.NonBlocking && res.Makespan != schedule.Makespan(s) {
						t.Errorf("%s: simulated makespan %d, schedule's %d", label, res.Makespan, schedule.Makespan(s))
					}
				}
			}
		}
	}
}
