package verify_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// periodicCase is a schedule of a window extended to n micro-batches,
// as its periodic form (instances not built).
type periodicCase struct {
	name string
	s    *schedule.Schedule
}

// periodicCases are baselines of several built-in placements, each
// extended periodically to several N, under a memory budget of their
// own peak (so that the budget binds) and, for some, a latency budget of
// their own largest latency.
func periodicCases(t testing.TB) []periodicCase {
	var out []periodicCase
	for _, c := range []struct {
		placement, baseline string
		opt                 placement.Options
	}{
		{"v-shape", "1f1b", placement.Options{Devices: 2}},
		{"v-shape", "1f1b", placement.Options{Devices: 4}},
		{"v-shape", "1f1b-interleaved", placement.Options{Devices: 2, Chunks: 2}},
		{"v-shape", "zb-h1", placement.Options{Devices: 3, SplitBackward: true}},
		{"m-shape", "1f1b-plus", placement.Options{Devices: 4}},
	} {
		p, err := placement.Builtin(c.placement, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := baseline.Lookup(c.baseline)
		w := 24
		s, err := b.Build(spec.New(p, w))
		if err != nil {
			t.Fatalf("%s %s: %v", c.placement, c.baseline, err)
		}
		s.Memory = max(1, slices.Max(schedule.Measure(s).PeakMemory))
		for _, n := range []int{w + 120, w + 360} {
			x, ok := schedule.Extensible(s, n)
			if !ok || x.Form() == nil {
				continue
			}
			ps := &schedule.Schedule{Spec: s.Spec.WithMicroBatches(n), Periodic: x.Form()}
			name := fmt.Sprintf("%s/%s/%d/N=%d", c.placement, c.baseline, c.opt.Devices, n)
			out = append(out, periodicCase{name, ps})
			if n == w+120 {
				full, err := ps.Materialize(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				lat := *ps
				lat.Latency = schedule.MeasureLatency(full).Max
				out = append(out, periodicCase{name + "/latency", &lat})
			}
		}
	}
	if len(out) < 6 {
		t.Fatalf("only %d periodic schedules", len(out))
	}
	return out
}

// fullVerdict is the verifier's verdict on s's instances built in full,
// without its form (nil or the error).
func fullVerdict(s *schedule.Schedule) error {
	full, err := s.Materialize(context.Background())
	if err != nil {
		return err
	}
	c := *full
	c.Periodic = nil
	return verify.Schedule(&c)
}

// mutate changes one thing of s's form (a copy): an instance of the
// head, period or tail moved in time or micro-batch, the shift or the
// repetitions changed.
func mutate(rng *rand.Rand, s *schedule.Schedule) (*schedule.Schedule, string) {
	c := *s
	f := s.Periodic.Clone()
	c.Periodic = f
	delta := []int{-2, -1, 1, 2}[rng.IntN(4)]
	lists := []struct {
		name string
		ins  []schedule.Instance
	}{{"head", f.Head}, {"period", f.Period}, {"tail", f.Tail}}
	switch k := rng.IntN(10); {
	case k < 7:
		l := lists[rng.IntN(3)]
		if len(l.ins) == 0 {
			l = lists[1]
		}
		x := rng.IntN(len(l.ins))
		if rng.IntN(4) == 0 {
			l.ins[x].Micro += delta
			return &c, fmt.Sprintf("%s instance %d micro %+d", l.name, x, delta)
		}
		l.ins[x].Start = max(0, l.ins[x].Start+delta)
		return &c, fmt.Sprintf("%s instance %d start %+d", l.name, x, delta)
	case k < 9:
		f.Shift.Time += delta
		return &c, fmt.Sprintf("shift time %+d", delta)
	default:
		f.Shift.Micro += delta
		return &c, fmt.Sprintf("shift micro %+d", delta)
	}
}

// The verdict from the period is the verdict on the full schedule: on
// periodic extensions of baselines of several placements and N, each
// valid, and on mutated copies (an instance moved in the head, period or
// tail, a shift changed), which the full schedule's verdict says are
// valid or not.
func TestPeriodicVerdictIsTheFullVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := periodicCases(t)
	fromPeriod, rejected := 0, 0
	for _, c := range cases {
		if err := verify.Schedule(c.s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := fullVerdict(c.s); err != nil {
			t.Fatalf("%s: full: %v", c.name, err)
		}
		if verify.FromPeriod(c.s) {
			fromPeriod++
		}
		for range 40 {
			m, what := mutate(rng, c.s)
			got, want := verify.Schedule(m), fullVerdict(m)
			if (got == nil) != (want == nil) {
				t.Fatalf("%s, %s: from the period %v, in full %v", c.name, what, got, want)
			}
			if got != nil {
				rejected++
			}
		}
	}
	t.Logf("%d schedules, %d checked from their period, %d of %d mutations rejected", len(cases), fromPeriod, rejected, 40*len(cases))
	if fromPeriod < len(cases)/2 {
		t.Errorf("only %d of %d schedules checked from their period", fromPeriod, len(cases))
	}
	if rejected < 50 {
		t.Errorf("only %d mutations rejected: the test does not reach the checks", rejected)
	}
}

// Named mutations are rejected, from the period, with the rule they
// break: an instance of the period moved onto another, the shift in time
// shortened, a dependency in the tail broken, a wrong claim.
func TestPeriodicRejects(t *testing.T) {
	c := periodicCases(t)[1] // v-shape 1f1b on 4 devices
	if !verify.FromPeriod(c.s) {
		t.Fatalf("%s: not checked from its period", c.name)
	}
	p := c.s.Placement
	for _, tc := range []struct {
		name string
		edit func(s *schedule.Schedule)
		kind schedule.ViolationKind
	}{
		{"period instance moved", func(s *schedule.Schedule) { s.Periodic.Period[0].Start++ }, schedule.Overlap},
		{"shift shortened", func(s *schedule.Schedule) { s.Periodic.Shift.Time-- }, schedule.Overlap},
		{"tail dependency broken", func(s *schedule.Schedule) {
			last := len(s.Periodic.Tail) - 1
			s.Periodic.Tail[last].Start -= 3 // the last backward of device 0, before its input
		}, schedule.Dependency},
		{"claimed makespan", func(s *schedule.Schedule) {
			m := schedule.Measure(s)
			s.Claimed = &schedule.Claimed{Makespan: m.Makespan + 1, BubbleRate: schedule.RoundRate(m.BubbleRate), PeakMemory: m.PeakMemory}
		}, schedule.MetricsMismatch},
		{"duplicate", func(s *schedule.Schedule) { s.Periodic.Tail[0] = s.Periodic.Head[0] }, schedule.Duplicate},
	} {
		s := *c.s
		s.Periodic = c.s.Periodic.Clone()
		tc.edit(&s)
		err := verify.Schedule(&s)
		ve, ok := err.(*schedule.VerifyError)
		if !ok {
			t.Errorf("%s: %v, want a violation", tc.name, err)
			continue
		}
		found := false
		for _, v := range ve.Violations {
			found = found || v.Kind == tc.kind
		}
		if !found {
			t.Errorf("%s: %v, want a %v violation", tc.name, err, tc.kind)
		}
		if full := fullVerdict(&s); full == nil && tc.kind != schedule.MetricsMismatch {
			t.Errorf("%s: valid in full", tc.name)
		}
	}
	_ = p
}

// A periodic file is written and read back: Parse builds the instances
// (those of the form), ParseForm keeps only the form, both verify, and
// writing either gives the same bytes.
func TestPeriodicFileRoundTrip(t *testing.T) {
	c := periodicCases(t)[0]
	var buf bytes.Buffer
	if err := c.s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"periodic": {`)) || bytes.Contains(buf.Bytes(), []byte(`"instances"`)) {
		t.Fatalf("not a periodic file:\n%s", buf.Bytes())
	}
	form, err := schedule.ParseForm(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	full, err := schedule.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if form.Instances != nil || len(full.Instances) != full.MicroBatches*len(full.Placement.Blocks) {
		t.Fatalf("ParseForm built %d instances, Parse %d", len(form.Instances), len(full.Instances))
	}
	for _, s := range []*schedule.Schedule{form, full} {
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := s.Write(&again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Errorf("written again, the bytes differ")
		}
	}
	// A copy whose instances changed keeps a form that no longer holds:
	// its instances alone are checked and written.
	bad := *full
	bad.Instances = append([]schedule.Instance(nil), full.Instances...)
	bad.Instances[len(bad.Instances)/2].Start++
	if verify.FromPeriod(&bad) || verify.Schedule(&bad) == nil {
		t.Error("a changed copy is checked from its stale form")
	}
	var changed bytes.Buffer
	if err := bad.Write(&changed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(changed.Bytes(), []byte(`"instances"`)) {
		t.Error("a changed copy is written by its stale form")
	}
}

// FuzzPeriodicSchedule reads periodic schedule files: whatever the bytes,
// ParseForm gives an error or a schedule, and the verdict from its
// period is the verdict on its full schedule.
func FuzzPeriodicSchedule(f *testing.F) {
	for _, c := range periodicCases(f)[:3] {
		var buf bytes.Buffer
		if err := c.s.Write(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"placement": {"name": "x", "devices": 1, "blocks": [{"id": "f", "kind": "forward", "devices": [0], "time": 1, "memory": 1}, {"id": "b", "kind": "backward", "devices": [0], "time": 1, "memory": -1}], "deps": [["f", "b"]]}, "micro_batches": 4, "memory": 1, "periodic": {"head": [], "period": [{"block": "f", "micro": 0, "start": 0}, {"block": "b", "micro": 0, "start": 1}], "shift": {"time": 2, "micro": 1}, "repetitions": 4, "tail": []}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := schedule.ParseForm(data)
		if err != nil || s.Periodic == nil {
			return
		}
		got, want := verify.Schedule(s), fullVerdict(s)
		if (got == nil) != (want == nil) {
			t.Fatalf("from the period %v, in full %v", got, want)
		}
	})
}

// FuzzPeriodicMutation mutates periodic extensions of baselines at
// random and compares the verdict from the period with the full one.
func FuzzPeriodicMutation(f *testing.F) {
	var cases []periodicCase
	for _, c := range periodicCases(f) {
		if c.s.MicroBatches <= 144 { // the smaller of each, for speed
			cases = append(cases, c)
		}
	}
	f.Add(uint64(1), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, which, count uint8) {
		rng := rand.New(rand.NewPCG(seed, 7))
		c := cases[int(which)%len(cases)]
		s := c.s
		for range 1 + int(count)%3 {
			s, _ = mutate(rng, s)
		}
		got, want := verify.Schedule(s), fullVerdict(s)
		if (got == nil) != (want == nil) {
			t.Fatalf("%s: from the period %v, in full %v", c.name, got, want)
		}
	})
}
