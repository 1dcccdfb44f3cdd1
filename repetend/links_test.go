package repetend

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// The link rule these tests pin (docs/design.md, "Links": with --channels
// the transfers of one link run one at a time as a resource of their own),
// as placement.LinkQueue states it; the repetend's steady state with
// channels is documented at encode.Steady.

// steadyState lays out iters iterations of r (iteration k runs
// B_i^{Offsets[i]+k} at Starts[i] + k·Period), books every transfer of
// them on its links by the placement's rule (LinkQueue, producers in
// start order, then block and micro-batch, as the verifier takes them),
// and lists every consumer present that starts before its tensor
// arrives. It also returns the most any tensor arrives later than it
// would if its producer had the links to itself (only its own transfers
// queued): 0 when no transfer waits for another instance's.
func steadyState(p *placement.Placement, r *Repetend, iters int) (waited int, broken []string) {
	type inst struct{ block, micro, start int }
	var ins []inst
	start := map[[2]int]int{}
	for k := range iters {
		for i := range p.Blocks {
			in := inst{i, r.Offsets[i] + k, r.Starts[i] + k*r.Period}
			ins = append(ins, in)
			start[[2]int{in.block, in.micro}] = in.start
		}
	}
	slices.SortFunc(ins, func(a, b inst) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.block, b.block), cmp.Compare(a.micro, b.micro))
	})
	q := p.NewLinkQueue()
	succs := p.SuccDeps()
	for _, in := range ins {
		alone := p.NewLinkQueue()
		for _, d := range succs[in.block] {
			at, _, _ := q.Arrival(d, in.start)
			at0, _, _ := alone.Arrival(d, in.start)
			waited = max(waited, at-at0)
			if s, ok := start[[2]int{d.To, in.micro}]; ok && s < at {
				broken = append(broken, fmt.Sprintf("%s^%d starts at %d before its tensor from %s^%d arrives at %d",
					p.Blocks[d.To].ID, in.micro, s, p.Blocks[d.From].ID, in.micro, at))
			}
		}
	}
	return waited, broken
}

// fanOut: a on device 0 (time 1) sends to c and d on device 1 (time 1
// each), the tensors taking 2 and 3 on the one link 0→1: a's two
// transfers run one after the other, in the order of Deps.
func fanOut() *placement.Placement {
	ac, ad := placement.Dep{From: 0, To: 1}, placement.Dep{From: 0, To: 2}
	return &placement.Placement{
		Name: "fan-out", Devices: 2,
		Blocks: []placement.Block{
			{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1},
			{ID: "d", Kind: placement.Forward, Devices: []int{1}, Time: 1},
		},
		Deps:   []placement.Dep{ac, ad},
		Timing: placement.Timing{Transfers: map[placement.Dep]int{ac: 2, ad: 3}, QueuedLinks: true},
	}
}

// linkLoad is the most time one link carries per micro-batch.
func linkLoad(p *placement.Placement) int {
	load := map[placement.Link]int{}
	worst := 0
	for _, d := range p.Deps {
		for _, l := range p.Links(d) {
			load[l] += p.Transfer(d)
			worst = max(worst, load[l])
		}
	}
	return worst
}

// TestRepetendLinksSteadyState: with channels, the repetends of both
// methods keep the rule over many iterations with no transfer waiting
// (the steady state the encoding asks for), both methods find the same
// least period, and no period is below the busiest link's load per
// micro-batch. Sequential keeps the rule too (its transfers may wait
// inside an iteration, never across).
func TestRepetendLinksSteadyState(t *testing.T) {
	cases := []struct {
		name     string
		p        *placement.Placement
		memory   int
		maxNR    int
		transfer int
	}{
		{"two-senders", placementtest.TwoSenders(true), 0, 3, 0},
		{"fan-out", fanOut(), 0, 3, 0},
		{"v-shape", placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}), 0, 4, 5},
		{"m-shape", placementtest.Builtin(t, "m-shape", placement.Options{Devices: 2}), 0, 3, 3},
		{"x-shape", placementtest.Builtin(t, "x-shape", placement.Options{Devices: 2}), 4, 3, 2},
	}
	for _, tc := range cases {
		p := tc.p
		if tc.transfer > 0 {
			p = setTransfers(p, tc.transfer)
		}
		p.QueuedLinks = true
		var periods []int
		for _, m := range []Strategy{StrategyEnumerate, StrategyJoint} {
			what := fmt.Sprintf("%s %s", tc.name, m)
			r, err := Search(context.Background(), spec.Spec{Placement: p, Memory: tc.memory}, Options{MaxNR: tc.maxNR, Strategy: m, Jobs: 1})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if r.Best == nil || !r.Proven {
				t.Fatalf("%s: best %v proven %v", what, r.Best, r.Proven)
			}
			if w, broken := steadyState(p, r.Best, r.Best.NR+4); w != 0 || broken != nil {
				t.Errorf("%s: a transfer waits %d for its link in the steady state; broken: %v", what, w, broken)
			}
			if l := linkLoad(p); r.Best.Period < l {
				t.Errorf("%s: period %d below the busiest link's load %d", what, r.Best.Period, l)
			}
			if b := PeriodBound(p, r.Best.Offsets); r.Best.Period < b {
				t.Errorf("%s: period %d below the candidate's bound %d", what, r.Best.Period, b)
			}
			periods = append(periods, r.Best.Period)
		}
		if periods[0] != periods[1] {
			t.Errorf("%s: enumeration finds period %d, joint %d", tc.name, periods[0], periods[1])
		}
		if seq := Sequential(p); seq == nil {
			t.Errorf("%s: no sequential repetend", tc.name)
		} else {
			if _, broken := steadyState(p, seq, 4); broken != nil {
				t.Errorf("%s sequential: %v", tc.name, broken)
			}
		}
	}
}

// TestChannelsLengthenPeriod: twoSenders's link 0→1 carries two tensors
// of 2 per micro-batch, so with channels no period is below 4; without
// them device 0's load, 2, is the least period. The searches find both.
func TestChannelsLengthenPeriod(t *testing.T) {
	for _, channels := range []bool{false, true} {
		p := placementtest.TwoSenders(channels)
		r, err := Search(context.Background(), spec.Spec{Placement: p}, Options{MaxNR: 3, Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := 2
		if channels {
			want = 4
		}
		if r.Best == nil || r.Best.Period != want {
			t.Fatalf("channels %v: best %+v, want period %d", channels, r.Best, want)
		}
		// Under the rule of channels.
		w, broken := steadyState(placementtest.TwoSenders(true), r.Best, r.Best.NR+4)
		if channels && (w != 0 || broken != nil) {
			t.Errorf("channels: a transfer waits %d; broken: %v", w, broken)
		}
		if !channels && broken == nil {
			t.Errorf("the repetend without channels keeps the link rule: the test shows nothing")
		}
	}
}

// TestPeriodBoundWithChannels: with channels, PeriodBound (steady delays
// and link windows) stays at or below the least period the encoding finds
// for every candidate, and for some candidates above what it is without
// channels, so that the link terms are exercised.
func TestPeriodBoundWithChannels(t *testing.T) {
	var raised int
	for _, tc := range []struct {
		p  *placement.Placement
		nr int
	}{
		{placementtest.TwoSenders(true), 3},
		{fanOut(), 3},
		{setTransfers(placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2}), 3), 3},
		{setTransfers(placementtest.Builtin(t, "m-shape", placement.Options{Devices: 2}), 3), 2},
	} {
		p := tc.p
		p.QueuedLinks = true
		free := p.Clone()
		free.QueuedLinks = false
		for nr := 1; nr <= tc.nr; nr++ {
			Enumerate(context.Background(), p, nr, func(cd Assignment) bool {
				bound := PeriodBound(p, cd.Offsets)
				if bound > PeriodBound(free, cd.Offsets) {
					raised++
				}
				r, _, err := MinimizePeriod(context.Background(), spec.Spec{Placement: p}, cd, 1, upperPeriod(p)*nr+1, PeriodOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if r != nil && r.Period < bound {
					t.Errorf("%s %v: bound %d above the least period %d", p.Name, cd.Offsets, bound, r.Period)
				}
				return true
			})
		}
	}
	if raised == 0 {
		t.Error("channels never raise the bound: the test exercises nothing")
	}
}
