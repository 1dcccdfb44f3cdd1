package repetend

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

func loadFile(t testing.TB, path string) *placement.Placement {
	t.Helper()
	p, err := placement.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// smallCases are placements whose every method finishes in well under a
// second, with and without a binding memory budget.
func smallCases(t *testing.T) []struct {
	p      *placement.Placement
	memory int
	nr     int
} {
	return []struct {
		p      *placement.Placement
		memory int
		nr     int
	}{
		{placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2}), 0, 3},
		{placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3}), 2, 3},
		{placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3}), 0, 3},
		{placementtest.Builtin(t, "x-shape", placement.Options{Devices: 2}), 2, 2},
		{placementtest.Builtin(t, "k-shape", placement.Options{Devices: 2}), 3, 3},
		{placementtest.Builtin(t, "m-shape", placement.Options{Devices: 2}), 0, 3},
		{placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3, Inference: true}), 0, 3},
		{loadFile(t, "../testdata/placements/unequal.json"), 3, 3},
	}
}

// The enumeration (Algorithm 1) and the joint search are two ways to the
// same least period.
func TestMethodsAgreeOnThePeriod(t *testing.T) {
	for _, c := range smallCases(t) {
		var periods []int
		for _, m := range []Strategy{StrategyEnumerate, StrategyJoint, StrategyRace} {
			r, err := Search(context.Background(), spec.Spec{Placement: c.p, Memory: c.memory}, Options{MaxNR: c.nr, Strategy: m, Jobs: 2})
			if err != nil {
				t.Fatalf("%s memory %d %s: %v", c.p.Name, c.memory, m, err)
			}
			if r.Best == nil || !r.Proven {
				t.Fatalf("%s memory %d %s: best %v proven %v", c.p.Name, c.memory, m, r.Best, r.Proven)
			}
			if r.Best.Period < r.LowerBound {
				t.Errorf("%s %s: period %d below the lower bound %d", c.p.Name, m, r.Best.Period, r.LowerBound)
			}
			if got := EntryMemory(c.p, r.Best.Offsets); !withinBudget(c.p, got, c.memory) {
				t.Errorf("%s %s: entry memory %v over budget %d", c.p.Name, m, got, c.memory)
			}
			expand(t, c.p, r.Best, r.Best.NR+2)
			periods = append(periods, r.Best.Period)
		}
		if periods[0] != periods[1] || periods[1] != periods[2] {
			t.Errorf("%s memory %d: periods enumerate/joint/race = %v", c.p.Name, c.memory, periods)
		}
	}
}

// The answer of the enumeration does not depend on the number of workers:
// least period, then earliest candidate, solved once more alone.
func TestEnumerationIsIndependentOfWorkers(t *testing.T) {
	for _, c := range smallCases(t)[:5] {
		var first *Repetend
		for _, jobs := range []int{1, 2, 5} {
			r, err := Search(context.Background(), spec.Spec{Placement: c.p, Memory: c.memory}, Options{MaxNR: c.nr, Strategy: StrategyEnumerate, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = r.Best
				continue
			}
			if !reflect.DeepEqual(first, r.Best) {
				t.Errorf("%s: jobs %d found %+v, jobs 1 found %+v", c.p.Name, jobs, r.Best, first)
			}
		}
	}
}

// PeriodBound never exceeds the least period the solver finds for the
// same candidate, so pruning by it loses nothing.
func TestPeriodBoundIsSound(t *testing.T) {
	for _, c := range smallCases(t)[:4] {
		for nr := 1; nr <= c.nr; nr++ {
			Enumerate(context.Background(), c.p, nr, func(cd Assignment) bool {
				bound := PeriodBound(c.p, cd.Offsets)
				r, _, err := MinimizePeriod(context.Background(), spec.Spec{Placement: c.p}, cd, 1, upperPeriod(c.p)*nr+1, PeriodOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if r != nil && r.Period < bound {
					t.Errorf("%s %v: bound %d above the least period %d", c.p.Name, cd.Offsets, bound, r.Period)
				}
				return true
			})
		}
	}
}

// Reference: §IV-B — the repetend's entry memory is what the warmup left:
// for V-shape, device s holds n_{f_s} − n_{b_s} activations.
func TestEntryMemory(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	// f0 f1 f2 f3 b3 b2 b1 b0
	got := EntryMemory(p, []int{3, 3, 3, 2, 2, 1, 1, 0})
	if want := []int{3, 2, 2, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("entry memory %v, want %v", got, want)
	}
}

// The paper's CalMaxInflight: with memory M, V-shape's first stage holds
// N_R − 1 activations when the repetend starts, so N_R ≤ M + 1.
func TestMaxNRFollowsTheBudget(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{})
	for _, c := range []struct{ memory, want int }{{1, 2}, {2, 3}, {4, 5}, {0, 8}} {
		if got := MaxNR(context.Background(), spec.Spec{Placement: p, Memory: c.memory}, DefaultNRLimit(p)); got != c.want {
			t.Errorf("memory %d: max N_R %d, want %d", c.memory, got, c.want)
		}
	}
}

// A search that runs out of time returns what it has, marked as not
// proven, and no error.
func TestTimeLimitIsNotProven(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 8})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r, err := Search(ctx, spec.Spec{Placement: p}, Options{MaxNR: 8, Strategy: StrategyEnumerate, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Proven {
		t.Errorf("proven after 300ms on 8 devices: %+v", r.Stats)
	}
}

func TestParseMethod(t *testing.T) {
	for _, m := range Strategies() {
		if got, err := ParseStrategy(string(m)); err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := ParseStrategy("fast"); err == nil {
		t.Error("ParseMethod(fast) accepted")
	}
}

// Accept rejects candidates (the lazy completion check): the search must
// go on to the next best and count the rejection.
func TestAcceptRejections(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3})
	var rejected []int
	accept := func(_ context.Context, nr int, offs []int) (bool, error) {
		if rejected == nil {
			rejected = append([]int(nil), offs...)
			return false, nil
		}
		return !reflect.DeepEqual(offs, rejected), nil
	}
	for _, m := range []Strategy{StrategyJoint, StrategyEnumerate} {
		rejected = nil
		r, err := Search(context.Background(), spec.Spec{Placement: p}, Options{MaxNR: 4, Strategy: m, Jobs: 1, Accept: accept})
		if err != nil {
			t.Fatal(err)
		}
		if r.Stats.Rejected == 0 || reflect.DeepEqual(r.Best.Offsets, rejected) {
			t.Errorf("%s: rejected %v, got %v with %d rejections", m, rejected, r.Best.Offsets, r.Stats.Rejected)
		}
	}
	boom := errors.New("boom")
	_, err := Search(context.Background(), spec.Spec{Placement: p}, Options{MaxNR: 3, Strategy: StrategyJoint, Accept: func(context.Context, int, []int) (bool, error) { return false, boom }})
	if !errors.Is(err, boom) {
		t.Errorf("error from Accept lost: %v", err)
	}
}

// A search stopped before it found anything still answers with the
// sequential repetend (one micro-batch at a time), not proven.
func TestStoppedSearchFallsBackToSequential(t *testing.T) {
	p := placementtest.Builtin(t, "nn-shape", placement.Options{Devices: 4})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range Strategies() {
		r, err := Search(ctx, spec.Spec{Placement: p, Memory: 6}, Options{MaxNR: 6, Strategy: m})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if r.Proven || r.Best == nil || r.Best.NR != 1 || r.Best.Period != p.CriticalPath() {
			t.Fatalf("%s: proven %v, best %+v; want the sequential repetend of period %d", m, r.Proven, r.Best, p.CriticalPath())
		}
		expand(t, p, r.Best, 4)
	}
	// A budget below one micro-batch's own peak admits not even that:
	// on k-shape a branch forward and the cross block hold 2.
	k := placementtest.Builtin(t, "k-shape", placement.Options{})
	r, err := Search(ctx, spec.Spec{Placement: k, Memory: 1}, Options{MaxNR: 2})
	if err != nil || r.Best != nil {
		t.Errorf("memory 1: best %+v, err %v; want none", r.Best, err)
	}
}

// Progress of the enumeration counts its candidates out of the total of
// the pruned space up to N_R.
func TestProgressTotal(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3})
	want := 0
	for nr := 1; nr <= 3; nr++ {
		Enumerate(context.Background(), p, nr, func(Assignment) bool { want++; return true })
	}
	var last Progress
	_, err := Search(context.Background(), spec.Spec{Placement: p}, Options{MaxNR: 3, Strategy: StrategyEnumerate, Jobs: 1, Progress: func(pr Progress) { last = pr }})
	if err != nil {
		t.Fatal(err)
	}
	if last.Total != want || last.Stats.Seen == 0 || last.Stats.Seen > want {
		t.Errorf("progress %+v, want a total of %d", last, want)
	}
}
