package schedule_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
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

// swapped is f0 → f1 on two devices whose one link carries one transfer
// at a time, each taking 3 (a cluster with channels), two micro-batches,
// and a schedule whose link carries micro-batch 1's tensor before
// micro-batch 0's, although f0^0 starts first: f0^m at m, f1^1 at 5
// (f0^1 ends at 2, its transfer 2..5), f1^0 at 8 (its transfer 5..8).
func swapped(t *testing.T) *schedule.Schedule {
	t.Helper()
	src := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, Inference: true})
	c := cluster.Uniform(2)
	c.Default = cluster.Link{Latency: 3}
	c.QueuedLinks = true
	q, err := c.Apply(src)
	if err != nil {
		t.Fatal(err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: 2}}
	if err := s.SetCluster(c, src); err != nil {
		t.Fatal(err)
	}
	if got := s.Placement.Transfer(placement.Dep{From: 0, To: 1}); got != 3 {
		t.Fatalf("transfer f0 -> f1 takes %d, want 3", got)
	}
	s.Instances = []schedule.Instance{{Block: 0, Micro: 0, Start: 0}, {Block: 0, Micro: 1, Start: 1}, {Block: 1, Micro: 1, Start: 5}, {Block: 1, Micro: 0, Start: 8}}
	return s
}

func f0f1(micro int) placement.LinkTransfer {
	return placement.LinkTransfer{Dep: placement.Dep{From: 0, To: 1}, Micro: micro}
}

// A recorded link order (She et al., operator-level MIP, §III eqs 14–15:
// the order of two transfers on one link is a decision) that differs from
// the producer-start order is accepted where the consumers wait for it,
// survives the schedule file, and is what the verifier times transfers
// by: the same schedule without it breaks the producer-start rule.
func TestLinkOrderRecorded(t *testing.T) {
	s := swapped(t)
	var ve *schedule.VerifyError
	if err := verify.Schedule(s); !errors.As(err, &ve) || !strings.Contains(err.Error(), "micro-batch 1") {
		t.Fatalf("producer-start order: %v, want micro-batch 1's dependency broken", err)
	}
	s.LinkOrder = []placement.LinkOrder{{Link: placement.Link{From: 0, To: 1}, Transfers: []placement.LinkTransfer{f0f1(1), f0f1(0)}}}
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("recorded order: %v", err)
	}
	// The transfers, as drawn, follow the recorded order.
	l01 := placement.Link{From: 0, To: 1}
	wantSpans := []schedule.TransferSpan{{Dep: f0f1(1).Dep, Micro: 1, Link: l01, Start: 2, End: 5}, {Dep: f0f1(0).Dep, Micro: 0, Link: l01, Start: 5, End: 8}}
	if got := schedule.Transfers(s); !slices.Equal(got, wantSpans) {
		t.Errorf("transfers %+v, want %+v", got, wantSpans)
	}
	var first bytes.Buffer
	if err := s.Write(&first); err != nil {
		t.Fatal(err)
	}
	want := `"link_order": [
    {"from": 0, "to": 1, "transfers": [{"from": "f0", "to": "f1", "micro": 1}, {"from": "f0", "to": "f1", "micro": 0}]}
  ]`
	if !strings.Contains(first.String(), want) {
		t.Fatalf("written file lacks\n%s\n%s", want, first.String())
	}
	golden(t, "link-order.json", first.Bytes())
	back, err := schedule.Parse(first.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(back); err != nil {
		t.Fatalf("parsed: %v", err)
	}
	var second bytes.Buffer
	if err := back.Write(&second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("round trip differs:\n%s\n%s", first.Bytes(), second.Bytes())
	}
	// Without a recorded order nothing is written.
	s.LinkOrder = nil
	var plain bytes.Buffer
	if err := s.Write(&plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "link_order") {
		t.Errorf("link_order written without a recorded order")
	}
	// The recorded order is the producer-start one: the same as none.
	s.LinkOrder = []placement.LinkOrder{{Link: placement.Link{From: 0, To: 1}, Transfers: []placement.LinkTransfer{f0f1(0), f0f1(1)}}}
	if err, err0 := verify.Schedule(s), verify.Schedule(&schedule.Schedule{Spec: spec.Spec{Placement: s.Placement, Cluster: s.Cluster, Given: s.Given, MicroBatches: 2}, Instances: s.Instances}); err == nil || err0 == nil || err.Error() != err0.Error() {
		t.Errorf("producer-start order recorded: %v, want as without: %v", err, err0)
	}
}

// Under a recorded order a consumer that starts before its tensor has
// crossed the link in that order is reported, naming the transfer, its
// wait and its link; a recorded order that misses, repeats or invents a
// transfer is reported naming it.
func TestLinkOrderViolations(t *testing.T) {
	l01 := placement.Link{From: 0, To: 1}
	tests := []struct {
		name  string
		order []placement.LinkOrder
		early bool // f1^0 at 7 instead of 8
		want  []string
	}{
		{"consumer early", []placement.LinkOrder{{Link: l01, Transfers: []placement.LinkTransfer{f0f1(1), f0f1(0)}}}, true,
			[]string{"dependency: dependency f0 -> f1 broken for micro-batch 0: f0^0 ends at 1, its transfer waits 4 for link 0->1 and takes 3, f1^0 starts at 7 < 8"}},
		{"missing", []placement.LinkOrder{{Link: l01, Transfers: []placement.LinkTransfer{f0f1(1)}}}, false,
			[]string{"link-order: link order of link 0->1: transfer f0 -> f1 of micro-batch 0 missing"}},
		{"twice", []placement.LinkOrder{{Link: l01, Transfers: []placement.LinkTransfer{f0f1(1), f0f1(0), f0f1(1)}}}, false,
			[]string{"link-order: link order of link 0->1: transfer f0 -> f1 of micro-batch 1 listed twice"}},
		{"no producer", []placement.LinkOrder{{Link: l01, Transfers: []placement.LinkTransfer{f0f1(1), f0f1(0), f0f1(2)}}}, false,
			[]string{"link-order: link order of link 0->1: transfer f0 -> f1 of micro-batch 2 has no producer in the schedule"}},
		{"wrong link", []placement.LinkOrder{{Link: l01, Transfers: []placement.LinkTransfer{f0f1(1), f0f1(0)}}, {Link: placement.Link{From: 1, To: 0}, Transfers: []placement.LinkTransfer{f0f1(0)}}}, false,
			[]string{"link-order: link order of link 1->0: transfer f0 -> f1 of micro-batch 0 does not cross it"}},
		{"link twice", []placement.LinkOrder{{Link: l01, Transfers: []placement.LinkTransfer{f0f1(1), f0f1(0)}}, {Link: l01}}, false,
			[]string{"link-order: link order: link 0->1 named twice"}},
		{"no dependency", []placement.LinkOrder{{Link: l01, Transfers: []placement.LinkTransfer{f0f1(1), f0f1(0), {Dep: placement.Dep{From: 1, To: 0}}}}}, false,
			[]string{"link-order: link order of link 0->1: no dependency 1 -> 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := swapped(t)
			s.LinkOrder = tc.order
			if tc.early {
				s.Instances[3].Start = 7
			}
			var ve *schedule.VerifyError
			if err := verify.Schedule(s); !errors.As(err, &ve) {
				t.Fatalf("got %v, want a VerifyError", err)
			}
			var got []string
			for _, v := range ve.Violations {
				got = append(got, string(v.Kind)+": "+v.Message)
			}
			// A missing transfer also breaks the dependency it serves
			// when its link's order is otherwise kept; only the order's
			// own messages are pinned here, in full.
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("violations %q lack %q", got, w)
				}
			}
		})
	}
	// Without channels a recorded order is an error.
	s := &schedule.Schedule{Spec: spec.Spec{Placement: inference2(t, 3, false), MicroBatches: 2}, Instances: []schedule.Instance{{Block: 0, Micro: 0, Start: 0}, {Block: 0, Micro: 1, Start: 1}, {Block: 1, Micro: 0, Start: 4}, {Block: 1, Micro: 1, Start: 5}}}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	s.LinkOrder = []placement.LinkOrder{{Link: l01}}
	if err := verify.Schedule(s); err == nil || !strings.Contains(err.Error(), "link order recorded but the placement has no channels") {
		t.Errorf("without channels: %v", err)
	}
}

// Choosing the order on a link can beat the producer-start order (She et
// al., operator-level MIP, §III eqs 14–15). Device 0 runs a then b (time
// 1 each), device 1 runs c after a and d after b (times 1 and 5); a's
// tensor takes 4 on the link, b's 1. In producer-start order b's tensor
// waits for a's, d starts at 6 and the schedule ends at 11 (the least
// under that rule for these device orders: compaction); carrying b's
// tensor first lets d start at 3 and the schedule end at 9.
func TestLinkOrderBeatsProducerStart(t *testing.T) {
	p := &placement.Placement{
		Name:    "two-links",
		Devices: 2,
		Blocks: []placement.Block{
			{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "b", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1},
			{ID: "d", Kind: placement.Forward, Devices: []int{1}, Time: 5},
		},
		Deps:   []placement.Dep{{From: 0, To: 2}, {From: 1, To: 3}},
		Timing: placement.Timing{Transfers: map[placement.Dep]int{{From: 0, To: 2}: 4, {From: 1, To: 3}: 1}, QueuedLinks: true},
	}
	insC, err := compact.Compact(spec.New(p, 1), compact.Keep{Orders: [][]schedule.Ref{{{0, 0}, {1, 0}}, {{3, 0}, {2, 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	rule := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Instances: ins}
	if err := verify.Schedule(rule); err != nil {
		t.Fatal(err)
	}
	insC, err = compact.Compact(spec.New(p, 1), compact.Keep{Orders: [][]schedule.Ref{{{0, 0}, {1, 0}}, {{2, 0}, {3, 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	ins = insC.Instances
	rule2 := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Instances: ins}
	if err := verify.Schedule(rule2); err != nil {
		t.Fatal(err)
	}
	if m := min(schedule.Makespan(rule), schedule.Makespan(rule2)); m != 11 {
		t.Errorf("producer-start order: makespan %d, want 11", m)
	}
	chosen := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Instances: []schedule.Instance{{Block: 0, Start: 0}, {Block: 1, Start: 1}, {Block: 3, Start: 3}, {Block: 2, Start: 8}}, LinkOrder: []placement.LinkOrder{{Link: placement.Link{From: 0, To: 1}, Transfers: []placement.LinkTransfer{
		{Dep: placement.Dep{From: 1, To: 3}}, {Dep: placement.Dep{From: 0, To: 2}}}}}}
	if err := verify.Schedule(chosen); err != nil {
		t.Fatalf("chosen order: %v", err)
	}
	if m := schedule.Makespan(chosen); m != 9 {
		t.Errorf("chosen order: makespan %d, want 9", m)
	}
	chosen.LinkOrder = nil
	if err := verify.Schedule(chosen); err == nil {
		t.Errorf("chosen starts accepted under the producer-start order")
	}
}

// A bad "link_order" is one line naming the item at fault.
func TestParseLinkOrderBad(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "link-order.json"))
	if err != nil {
		t.Fatal(err)
	}
	good := `{"from": 0, "to": 1, "transfers": [{"from": "f0", "to": "f1", "micro": 1}`
	tests := []struct{ name, bad, want string }{
		{"device", `{"from": 0, "to": 2, "transfers": [{"from": "f0", "to": "f1", "micro": 1}`, `field "link_order": item 0: device 2 out of range 0..1`},
		{"self", `{"from": 1, "to": 1, "transfers": [{"from": "f0", "to": "f1", "micro": 1}`, `field "link_order": item 0: link 1->1 joins a device to itself`},
		{"block", `{"from": 0, "to": 1, "transfers": [{"from": "f9", "to": "f1", "micro": 1}`, `field "link_order": item 0: transfer 0: unknown block "f9"`},
		{"dependency", `{"from": 0, "to": 1, "transfers": [{"from": "f1", "to": "f0", "micro": 1}`, `field "link_order": item 0: transfer 0: no dependency f1 -> f0`},
		{"micro", `{"from": 0, "to": 1, "transfers": [{"from": "f0", "to": "f1", "micro": -1}`, `field "link_order": item 0: transfer 0: micro-batch -1 out of range`},
		{"field", `{"from": 0, "to": 1, "transfers": [{"from": "f0", "to": "f1", "micro": 1, "x": 1}`, `field "link_order": item 0: transfer 0: unknown field "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(string(data), good, tc.bad, 1)
			if in == string(data) {
				t.Fatal("replacement not found")
			}
			_, err := schedule.Parse([]byte(in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}
