package schedule_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// moe is placement/testdata/overlap.json: two stages, a forward and a
// whole backward of two micro-batches on one device may overlap (f1 with
// b1 for 5, others for ⌈0.75·(F + B)⌉).
func moe(t *testing.T) *placement.Placement {
	t.Helper()
	p, err := placement.Load("../placement/testdata/overlap.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// moeOrders: device 1 runs f1^1 and b1^0 next to each other.
func moeOrders() [][]schedule.Ref {
	return [][]schedule.Ref{
		{{0, 0}, {0, 1}, {3, 0}, {3, 1}},
		{{1, 0}, {1, 1}, {2, 0}, {2, 1}},
	}
}

// moePaired is moeOrders with f1^1 and b1^0 overlapped: both start at 4
// and end at 9, the pair's time 5 instead of 2 + 4.
func moePaired(t *testing.T) *schedule.Schedule {
	t.Helper()
	p := moe(t)
	pairs := []schedule.Pair{{Forward: schedule.Ref{1, 1}, Backward: schedule.Ref{2, 0}}}
	insC, err := compact.Compact(spec.New(p, 2), compact.Keep{Orders: moeOrders(), Pairs: pairs})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	return &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 2}, Instances: ins, Pairs: pairs}
}

func TestCompactPairs(t *testing.T) {
	s := moePaired(t)
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	start := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		start[in.Ref()] = in.Start
	}
	want := map[schedule.Ref]int{{0, 0}: 0, {0, 1}: 2, {1, 0}: 2, {1, 1}: 4, {2, 0}: 4, {2, 1}: 9, {3, 0}: 9, {3, 1}: 13}
	for r, w := range want {
		if start[r] != w {
			t.Errorf("%s starts at %d, want %d", schedule.RefName(s, r), start[r], w)
		}
	}
	if m := schedule.Measure(s); m.Makespan != 17 || m.Loads[1] != 2+5+4 {
		t.Errorf("makespan %d, loads %v; want 17 and device 1 busy 11", m.Makespan, m.Loads)
	}
	plainC, err := compact.Compact(spec.New(s.Placement, 2), compact.Keep{Orders: moeOrders()})
	if err != nil {
		t.Fatal(err)
	}
	plain := plainC.Instances
	if ms := schedule.Makespan(&schedule.Schedule{Spec: spec.Spec{Placement: s.Placement, MicroBatches: 2}, Instances: plain}); ms != 18 {
		t.Errorf("unpaired makespan %d, want 18", ms)
	}
	// A pair whose instances are not next to each other cannot start together.
	apart := [][]schedule.Ref{moeOrders()[0], {{1, 0}, {1, 1}, {2, 1}, {2, 0}}}
	if _, err := compact.Compact(spec.New(s.Placement, 2), compact.Keep{Orders: apart, Pairs: s.Pairs}); err == nil {
		t.Error("compacted a pair split by another instance")
	}
	if _, err := compact.Compact(spec.New(s.Placement, 2), compact.Keep{Orders: moeOrders(), Pairs: []schedule.Pair{{schedule.Ref{1, 0}, schedule.Ref{2, 0}}}}); err == nil || !strings.Contains(err.Error(), "one micro-batch") {
		t.Errorf("a pair of one micro-batch: %v", err)
	}
}

// TestVerifyPairs: the verifier names the pair and the rule it breaks.
func TestVerifyPairs(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *schedule.Schedule)
		kind   schedule.ViolationKind
		want   string
	}{
		{"one micro-batch", func(s *schedule.Schedule) {
			s.Pairs = append(s.Pairs, schedule.Pair{schedule.Ref{0, 0}, schedule.Ref{3, 0}})
		}, schedule.OverlapPair,
			"pair f0^0+b0^0: the forward and the backward are of one micro-batch"},
		{"apart", func(s *schedule.Schedule) { s.Pairs = []schedule.Pair{{schedule.Ref{0, 1}, schedule.Ref{3, 0}}} }, schedule.OverlapPair,
			"pair f0^1+b0^0: b0^0 starts at 9, not with f0^1 at 2 (an overlapped pair starts together)"},
		{"twice", func(s *schedule.Schedule) {
			s.Pairs = append(s.Pairs, schedule.Pair{schedule.Ref{1, 1}, schedule.Ref{2, 0}})
		}, schedule.OverlapPair,
			"pair f1^1+b1^0: f1^1 is also in pair f1^1+b1^0"},
		{"not a backward", func(s *schedule.Schedule) { s.Pairs = []schedule.Pair{{schedule.Ref{1, 1}, schedule.Ref{1, 0}}} }, schedule.OverlapPair,
			"pair f1^1+f1^0: f1 is not a backward or an input gradient"},
		{"no rule", func(s *schedule.Schedule) { s.Placement = s.Placement.Clone(); s.Placement.Overlap = nil }, schedule.OverlapPair,
			"the placement overlaps nothing"},
		{"pair ends later", func(s *schedule.Schedule) {
			for x, in := range s.Instances {
				if in.Ref() == (schedule.Ref{3, 0}) {
					s.Instances[x].Start = 8
				}
			}
		}, schedule.Dependency, "dependency b1 -> b0 broken for micro-batch 0: b1^0 ends at 9, b0^0 starts at 8"},
		{"device busy", func(s *schedule.Schedule) {
			for x, in := range s.Instances {
				if in.Ref() == (schedule.Ref{2, 1}) {
					s.Instances[x].Start = 8
				}
			}
		}, schedule.Overlap, "overlap on device 1: f1^1 [4,9) and b1^1 [8,12)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := moePaired(t)
			tt.change(s)
			err := verify.Schedule(s)
			var ve *schedule.VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want violations", err)
			}
			found := false
			for _, v := range ve.Violations {
				found = found || v.Kind == tt.kind && strings.Contains(v.Message, tt.want)
			}
			if !found {
				t.Errorf("violations %v, want a %s one with %q", ve.Violations, tt.kind, tt.want)
			}
		})
	}
}

func TestPairsFileRoundTrip(t *testing.T) {
	s := moePaired(t)
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"pairs": [`+"\n"+`    {"forward": "f1", "forward_micro": 1, "backward": "b1", "backward_micro": 0}`) {
		t.Errorf("file without its pair:\n%s", b.String())
	}
	back, err := schedule.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.Write(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != b.String() {
		t.Error("written again, the file differs")
	}
	for _, bad := range []struct{ in, want string }{
		{`[{"forward": "f1", "forward_micro": 1, "backward": "zz", "backward_micro": 0}]`, `item 0: unknown block "zz"`},
		{`[{"forward": "f1", "forward_micro": 1, "backward": "b1"}]`, `missing field "backward_micro"`},
		{`{}`, "want an array"},
	} {
		good := b.String()
		from := strings.LastIndex(good, `"pairs": `) + len(`"pairs": `)
		to := strings.Index(good, ",\n  \"metrics\"")
		text := good[:from] + bad.in + good[to:]
		if _, err := schedule.Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), `field "pairs"`) {
			t.Errorf("pairs %s: %v, want %q", bad.in, err, bad.want)
		}
	}
}

// TestOverlapBounds: the bounds hold for the paired schedule and are no
// higher than without the rule.
func TestOverlapBounds(t *testing.T) {
	s := moePaired(t)
	for _, n := range []int{1, 2, 8} {
		b := rules.LowerBounds(spec.New(s.Placement, n))
		q := s.Placement.Clone()
		q.Overlap = nil
		plain := rules.LowerBounds(spec.New(q, n))
		if b.Makespan > plain.Makespan || b.Period > plain.Period {
			t.Errorf("n=%d: bounds %+v above the ones without overlap %+v", n, b, plain)
		}
	}
	if b := rules.LowerBounds(spec.New(s.Placement, 2)); b.Makespan > schedule.Makespan(s) {
		t.Errorf("bound %d above the paired schedule's makespan %d", b.Makespan, schedule.Makespan(s))
	}
}
