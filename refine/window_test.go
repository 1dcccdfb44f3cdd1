package refine

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// Property: on random placements and budgets, LNS returns a valid
// schedule that is never longer than the one it was given, the same one
// on every run, and, on some, a shorter one from windows that are not at
// the ends (the windows are smaller than the schedule, and the ends are
// re-optimised first).
func TestLNSNeverWorse(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	shapes := placement.BuiltinNames()
	cases := 12
	if testing.Short() {
		cases = 4
	}
	won := 0
	for c := range cases {
		name := shapes[rng.Intn(len(shapes))]
		d := []int{2, 4}[rng.Intn(2)]
		p, err := placement.Builtin(name, placement.Options{Devices: d, BackwardTime: 1 + rng.Intn(3)})
		if err != nil {
			t.Fatal(err)
		}
		n := 4 + rng.Intn(6)
		mem := []int{0, 2 * d, 3 * d}[rng.Intn(3)]
		rule := construct.Rules()[rng.Intn(len(construct.Rules()))]
		s, err := construct.List(p, n, construct.ListOptions{Rule: rule, Memory: mem})
		if err != nil {
			continue
		}
		ends, _, err := Improve(context.Background(), s, Options{Windows: []int{12}, Effort: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		opt := LNSOptions{Sizes: []int{8 + rng.Intn(8)}, Effort: 100_000, Steps: 8}
		got, _, err := LNS(context.Background(), ends, opt)
		if err != nil {
			t.Fatalf("case %d %s: %v", c, name, err)
		}
		if err := verify.Schedule(got); err != nil {
			t.Fatalf("case %d %s: %v", c, name, err)
		}
		if schedule.Makespan(got) > schedule.Makespan(ends) {
			t.Errorf("case %d %s: makespan %d → %d", c, name, schedule.Makespan(ends), schedule.Makespan(got))
		}
		if schedule.Makespan(got) < schedule.Makespan(ends) {
			won++
		}
		again, _, _ := LNS(context.Background(), ends, opt)
		if fmt.Sprint(again.Instances) != fmt.Sprint(got.Instances) {
			t.Errorf("case %d %s: two runs differ", c, name)
		}
	}
	t.Logf("windows shortened %d of %d schedules whose ends were re-optimised", won, cases)
}

// Without a step budget LNS goes on until its context ends, and then
// answers at once (Ctrl-C within a second).
func TestLNSUntilCancelled(t *testing.T) {
	p, err := placement.Builtin("nn-shape", placement.Options{Devices: 8})
	if err != nil {
		t.Fatal(err)
	}
	s, err := construct.List(p, 16, construct.ListOptions{Rule: construct.Rules()[0], Memory: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stopped time.Time
	timer := time.AfterFunc(1500*time.Millisecond, func() { stopped = time.Now(); cancel() })
	defer timer.Stop()
	got, st, err := LNS(ctx, s, LNSOptions{Steps: -1})
	if err != nil {
		t.Fatal(err)
	}
	if stopped.IsZero() {
		t.Fatalf("LNS without a budget stopped by itself after %d steps", st.Steps)
	}
	if wait := time.Since(stopped); wait > time.Second {
		t.Errorf("answered %v after the context ended", wait)
	}
	if err := verify.Schedule(got); err != nil {
		t.Fatal(err)
	}
	if schedule.Makespan(got) > schedule.Makespan(s) {
		t.Errorf("makespan %d → %d", schedule.Makespan(s), schedule.Makespan(got))
	}
}
