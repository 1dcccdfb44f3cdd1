package schedule_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// split2 is v-shape on 2 devices with the backward split (f0 f1 i1 w1 i0
// w0, every time 1, memory +1 0 -1), every forward offloadable with time
// 1 and recomputable, at n micro-batches with the given starts (by id,
// one start per micro-batch).
func split2(t *testing.T, starts map[string][]int) *schedule.Schedule {
	t.Helper()
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, SplitBackward: true}).WithOffload(1).WithRecompute()
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p}}
	for id, ss := range starts {
		s.MicroBatches = len(ss)
		for m, st := range ss {
			s.Instances = append(s.Instances, schedule.Instance{Block: block(t, p, id), Micro: m, Start: st})
		}
	}
	s.Sort()
	return s
}

// two is a valid schedule of split2 with 2 micro-batches:
// device 0: f0^0 [0,1) f0^1 [1,2) i0^0 [4,5) i0^1 [5,6) w0^0 [6,7) w0^1 [7,8);
// device 1: f1^0 [1,2) f1^1 [2,3) i1^0 [3,4) i1^1 [4,5) w1^0 [5,6) w1^1 [6,7).
func two(t *testing.T) *schedule.Schedule {
	return split2(t, map[string][]int{
		"f0": {0, 1}, "f1": {1, 2}, "i1": {3, 4}, "w1": {5, 6}, "i0": {4, 5}, "w0": {6, 7},
	})
}

// loose is two with the backward later, leaving room for transfers:
// device 0: f0^0 [0,1) f0^1 [1,2) i0^0 [7,8) i0^1 [8,9) w0^0 [9,10) w0^1 [10,11);
// device 1: f1^0 [1,2) f1^1 [2,3) i1^0 [5,6) i1^1 [6,7) w1^0 [7,8) w1^1 [8,9).
func loose(t *testing.T) *schedule.Schedule {
	return split2(t, map[string][]int{
		"f0": {0, 1}, "f1": {1, 2}, "i1": {5, 6}, "w1": {7, 8}, "i0": {7, 8}, "w0": {9, 10},
	})
}

func decide(t *testing.T, s *schedule.Schedule, id string, micro int, a placement.Action, start, reload int) *schedule.Schedule {
	t.Helper()
	s.Decisions = append(s.Decisions, schedule.Decision{Block: block(t, s.Placement, id), Micro: micro, Action: a, Start: start, Reload: reload})
	return s
}

func violations(t *testing.T, s *schedule.Schedule) []schedule.Violation {
	t.Helper()
	err := verify.Schedule(s)
	if err == nil {
		return nil
	}
	var ve *schedule.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("Verify: %v is not a *VerifyError", err)
	}
	return ve.Violations
}

func TestConsumers(t *testing.T) {
	// Qi et al., OptPipe §3: the reload must end before the computation
	// that consumes the activation; with the backward split that is the
	// input-gradient block ("B"), the weight block ("W") running after it.
	for _, tc := range []struct {
		opt  placement.Options
		want map[string]string
	}{
		{placement.Options{Devices: 2}, map[string]string{"f0": "b0", "f1": "b1"}},
		{placement.Options{Devices: 2, SplitBackward: true}, map[string]string{"f0": "i0", "f1": "i1"}},
	} {
		p := placementtest.Builtin(t, "v-shape", tc.opt)
		c := p.Consumers()
		for i, b := range p.Blocks {
			want, ok := tc.want[b.ID]
			switch {
			case ok && (c[i] < 0 || p.Blocks[c[i]].ID != want):
				t.Errorf("%s: consumer of %s = %d, want %s", p.Name, b.ID, c[i], want)
			case !ok && c[i] >= 0:
				t.Errorf("%s: %s has consumer %s, want none", p.Name, b.ID, p.Blocks[c[i]].ID)
			}
		}
	}
}

func TestVerifyDecisionsValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *schedule.Schedule
	}{
		{"keep", two(t)},
		{"offload", decide(t, two(t), "f0", 0, placement.Offload, 1, 2)},
		{"offload both", decide(t, decide(t, two(t), "f0", 0, placement.Offload, 1, 2), "f0", 1, placement.Offload, 3, 4)},
		{"two devices, two channels", decide(t, decide(t, loose(t), "f0", 0, placement.Offload, 1, 3), "f1", 0, placement.Offload, 2, 3)},
		{"recompute", decide(t, two(t), "f0", 0, placement.Recompute, 2, 0)},
	} {
		if err := verify.Schedule(tc.s); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestVerifyDecisionViolations pins the rules of OptPipe's Appendix C
// (Qi et al., "OptPipe", eqs 10–19) as the verifier checks them, each
// violation naming the instance.
func TestVerifyDecisionViolations(t *testing.T) {
	shared := func(s *schedule.Schedule) *schedule.Schedule { s.Placement.Switches = []int{0, 0}; return s }
	tests := []struct {
		name  string
		s     *schedule.Schedule
		kind  schedule.ViolationKind
		first string
	}{
		{"reload ends after its consumer starts", decide(t, two(t), "f0", 0, placement.Offload, 1, 4),
			schedule.OffloadTiming, "reload of f0^0 ends at 5 > 4, when i0^0 starts"},
		{"offload before the forward ends", decide(t, two(t), "f0", 1, placement.Offload, 1, 3),
			schedule.OffloadTiming, "offload of f0^1 starts at 1 < 2, when f0^1 ends"},
		{"reload before the offload ends", decide(t, two(t), "f0", 0, placement.Offload, 2, 2),
			schedule.OffloadTiming, "reload of f0^0 starts at 2 < 3, when its offload ends"},
		{"two transfers at once on one channel", decide(t, decide(t, two(t), "f0", 0, placement.Offload, 2, 3), "f0", 1, placement.Offload, 2, 4),
			schedule.HostChannel, "host channel 0 carries two transfers at once: the offload of f0^0 [2,3) and the offload of f0^1 [2,3)"},
		{"devices on one switch share a channel", shared(decide(t, decide(t, loose(t), "f0", 0, placement.Offload, 1, 3), "f1", 0, placement.Offload, 2, 3)),
			schedule.HostChannel, "host channel 0 carries two transfers at once: the reload of f0^0 [3,4) and the reload of f1^0 [3,4)"},
		{"recompute ends after its consumer", decide(t, two(t), "f0", 0, placement.Recompute, 4, 0),
			schedule.RecomputeTiming, "recompute of f0^0 ends at 5 > 4, when i0^0 starts"},
		{"recompute before the forward ends", decide(t, two(t), "f0", 0, placement.Recompute, 0, 0),
			schedule.RecomputeTiming, "recompute of f0^0 starts at 0 < 1, when f0^0 ends"},
		{"recompute overlaps a block", decide(t, two(t), "f0", 0, placement.Recompute, 1, 0),
			schedule.Overlap, "overlap on device 0: the recompute of f0^0 [1,2) and f0^1 [1,2)"},
		{"a gradient block is not offloadable", decide(t, two(t), "i0", 0, placement.Offload, 5, 6),
			schedule.BadDecision, "i0^0: block i0 does not allow offload (not a forward block)"},
		{"decided twice", decide(t, decide(t, two(t), "f0", 0, placement.Recompute, 2, 0), "f0", 0, placement.Recompute, 2, 0),
			schedule.BadDecision, "f0^0 decided twice (decisions 0 and 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs := violations(t, tc.s)
			if len(vs) == 0 {
				t.Fatal("Verify accepted the schedule")
			}
			first := vs[0]
			if first.Kind != tc.kind {
				t.Errorf("first violation %s (%s), want kind %s", first.Kind, first.Message, tc.kind)
			}
			if first.Message != tc.first {
				t.Errorf("message %q, want %q", first.Message, tc.first)
			}
			if len(first.Instances) == 0 {
				t.Errorf("violation names no instance")
			}
		})
	}
}

// TestVerifyMemoryWithOffload: an activation leaves device memory when its
// offload ends and comes back when its reload starts (OptPipe eq 9), so a
// device can be over budget once offloads are counted.
func TestVerifyMemoryWithOffload(t *testing.T) {
	// Device 0 has budget 1: f0^0 [0,1), its offload [1,2), f0^1 [2,3);
	// the reload of f0^0 at 2 brings device 0 to 2.
	mk := func(reload int) *schedule.Schedule {
		s := split2(t, map[string][]int{
			"f0": {0, 2}, "f1": {1, 3}, "i1": {2, 4}, "w1": {5, 6}, "i0": {3, 5}, "w0": {4, 6},
		})
		s.Placement.Capacities = []int{1, 0}
		return s
	}
	if vs := violations(t, mk(0)); len(vs) != 1 || vs[0].Kind != schedule.Memory || vs[0].Message != "memory on device 0 reaches 2 > budget 1 after f0^1 at time 2" {
		t.Errorf("without offload: %v, want one memory violation at f0^1", vs)
	}
	s := decide(t, mk(0), "f0", 0, placement.Offload, 1, 2)
	vs := violations(t, s)
	if len(vs) != 1 || vs[0].Kind != schedule.Memory || vs[0].Message != "memory on device 0 reaches 2 > budget 1 after the reload of f0^0 at time 2" ||
		vs[0].Instances[0] != (schedule.Ref{block(t, s.Placement, "f0"), 0}) {
		t.Errorf("with the reload at 2: %v, want one memory violation at the reload of f0^0", vs)
	}
	// Recomputed instead: f0^0's memory leaves at its end (1) and returns
	// when the recompute starts; with f0^1 moved to 1 and the recompute at 2
	// the budget holds until the recompute, which crosses it.
	r := split2(t, map[string][]int{
		"f0": {0, 1}, "f1": {1, 2}, "i1": {3, 4}, "w1": {5, 6}, "i0": {4, 5}, "w0": {6, 7},
	})
	r.Placement.Capacities = []int{1, 0}
	decide(t, r, "f0", 0, placement.Recompute, 2, 0)
	vs = violations(t, r)
	if len(vs) != 1 || vs[0].Message != "memory on device 0 reaches 2 > budget 1 after the recompute of f0^0 at time 2" {
		t.Errorf("recompute: %v", vs)
	}
	if m := schedule.Measure(r); m.PeakMemory[0] != 2 || m.Loads[0] != 7 {
		t.Errorf("recompute: peak %v loads %v, want peak 2 and 7 busy on device 0 (the recompute counts)", m.PeakMemory, m.Loads)
	}
}

func TestDecisionsRoundTrip(t *testing.T) {
	s := decide(t, decide(t, two(t), "f0", 1, placement.Offload, 2, 3), "f0", 0, placement.Recompute, 2, 0)
	s.Placement.Switches = nil
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"decisions": [`+"\n"+`    {"block": "f0", "micro": 0, "action": "recompute", "start": 2},`+"\n"+
		`    {"block": "f0", "micro": 1, "action": "offload", "offload": 2, "reload": 3}`+"\n  ]") {
		t.Errorf("file:\n%s", b.String())
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
		t.Errorf("round trip differs:\n%s\nvs\n%s", again.String(), b.String())
	}
	if o, r := back.Count(); o != 1 || r != 1 {
		t.Errorf("Count = %d, %d, want 1, 1", o, r)
	}
}

func TestParseBadDecisions(t *testing.T) {
	var b bytes.Buffer
	if err := two(t).Write(&b); err != nil {
		t.Fatal(err)
	}
	base := b.String()
	for _, tc := range []struct{ item, want string }{
		{`{"block": "f9", "micro": 0, "action": "offload", "offload": 1, "reload": 2}`, `unknown block "f9"`},
		{`{"block": "f0", "micro": 0, "action": "swap", "offload": 1, "reload": 2}`, `action "swap"`},
		{`{"block": "f0", "micro": 0, "action": "offload", "start": 1}`, `an offload has "offload" and "reload" times`},
		{`{"block": "f0", "micro": 0, "action": "recompute", "offload": 1}`, `a recompute has a "start" time`},
		{`{"block": "f0", "micro": 0, "action": "recompute", "start": 1, "x": 2}`, `unknown field "x"`},
	} {
		data := strings.Replace(base, `  "metrics"`, fmt.Sprintf(`  "decisions": [%s],`+"\n"+`  "metrics"`, tc.item), 1)
		_, err := schedule.Parse([]byte(data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `field "decisions": item 0`) {
			t.Errorf("%s: error %v, want %q", tc.item, err, tc.want)
		}
	}
}

// Compaction keeps the orders of instances, recomputes, host channel
// moves and memory changes, so the compacted schedule verifies and ends
// no later; on another cluster the moves take its host links' times.
func TestCompactDecisions(t *testing.T) {
	s := decide(t, decide(t, loose(t), "f0", 0, placement.Offload, 1, 3), "f1", 1, placement.Recompute, 4, 0)
	c, err := compact.Compact(s.Spec, compact.Keep{From: s})
	if err != nil {
		t.Fatal(err)
	}
	if schedule.Makespan(c) >= schedule.Makespan(s) {
		t.Errorf("compacted makespan %d, want less than %d", schedule.Makespan(c), schedule.Makespan(s))
	}
	if o, r := c.Count(); o != 1 || r != 1 {
		t.Errorf("decisions %d, %d after compaction", o, r)
	}
	if ms, mc := schedule.Measure(s).PeakMemory, schedule.Measure(c).PeakMemory; ms[0] < mc[0] || ms[1] < mc[1] {
		t.Errorf("peak memory %v after compaction, %v before", mc, ms)
	}
	// The same orders on a cluster whose host link makes every move take 2.
	cl := &cluster.Cluster{Devices: []cluster.Device{
		{Speed: 1, Host: &cluster.Link{Latency: 2}}, {Speed: 1, Host: &cluster.Link{Latency: 2}},
	}}
	given := s.Placement.Clone()
	for i := range given.Blocks {
		if given.Blocks[i].Offload > 0 {
			given.Blocks[i].Activation = 1
		}
	}
	s.Placement = given
	on, err := compact.OnCluster(s, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, mv := range schedule.Moves(on) {
		if mv.End-mv.Start != 2 {
			t.Errorf("move %+v takes %d on the cluster, want 2", mv, mv.End-mv.Start)
		}
	}
}

// Keep.Built skips the check of From, not of the result: the same
// schedule comes back, and a From whose decisions cannot be met is still
// an error.
func TestCompactBuilt(t *testing.T) {
	s := decide(t, decide(t, loose(t), "f0", 0, placement.Offload, 1, 3), "f1", 1, placement.Recompute, 4, 0)
	want, err := compact.Compact(s.Spec, compact.Keep{From: s})
	if err != nil {
		t.Fatal(err)
	}
	got, err := compact.Compact(s.Spec, compact.Keep{From: s, Built: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with Built: %+v\nwithout: %+v", got, want)
	}
	over := *s
	over.Memory = 1 // under the peak the decisions leave: no re-timing fits it
	if _, err := compact.Compact(over.Spec, compact.Keep{From: &over, Built: true}); err == nil {
		t.Error("a From over its budget compacted with Built, want an error")
	}
}
