package baseline_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// deepSpeedDualPipeV is rank r's compute order in DeepSpeed's
// DualPipeVSchedule (deepspeed/runtime/pipe/schedule.py at
// deepspeedai/DeepSpeed commit 83fd8f87d0dcefc5c5f870c81b9c0c902df87f0c),
// written here from its steps: with L ranks and n micro-batches, rank r
// holds phase 0 (stage r) and phase 1 (stage 2L−1−r);
//
//  1. 2(L−r−1) forwards of phase 0;
//  2. r+1 times a forward of phase 0, then of phase 1;
//  3. L−r−1 times a backward of phase 1 whose weight gradient is
//     deferred (zero bubble), a weight pass, a forward of phase 1;
//  4. n−2L+r+1 times a forward of phase 0 with a whole backward of phase
//     1, then a forward of phase 1 with a whole backward of phase 0;
//  5. L−r−1 times a whole backward of phase 1, then a forward of phase 1
//     with a whole backward of phase 0;
//  6. r+1 times a backward of phase 1, then of phase 0, whole until the
//     middle step (r+1)/2 and deferred from there (on odd ranks from its
//     phase-1 backward, on even ranks from its phase-0 one);
//  7. L−r−1 times a weight pass, then a deferred backward of phase 0;
//  8. r+1 weight passes.
//
// A weight pass runs the oldest deferred weight gradient; a whole
// backward is its input gradient then its weight gradient. Each phase
// takes its micro-batches in order. Steps are "F0", "F1", "B0", "B1"
// (whole), "Z0", "Z1" (deferred) and "W".
func deepSpeedDualPipeV(L, r, n int) []string {
	var out []string
	add := func(xs ...string) { out = append(out, xs...) }
	for range 2 * (L - r - 1) {
		add("F0")
	}
	for range r + 1 {
		add("F0", "F1")
	}
	for range L - r - 1 {
		add("Z1", "W", "F1")
	}
	for range n - 2*L + r + 1 {
		add("F0", "B1", "F1", "B0")
	}
	for range L - r - 1 {
		add("B1", "F1", "B0")
	}
	step6 := r + 1
	zb := false
	for i := range step6 {
		if i == step6/2 && r%2 == 1 {
			zb = true
		}
		add(map[bool]string{false: "B1", true: "Z1"}[zb])
		if i == step6/2 && r%2 == 0 {
			zb = true
		}
		add(map[bool]string{false: "B0", true: "Z0"}[zb])
	}
	for range L - r - 1 {
		add("W", "Z0")
	}
	for range r + 1 {
		add("W")
	}
	return out
}

// refs turns DeepSpeed's steps on rank r into instances of the V
// placement p (stage s: blocks f<s>, i<s>, w<s>).
func refs(t *testing.T, p *placement.Placement, L, r int, steps []string) []schedule.Ref {
	t.Helper()
	stage := [2]int{r, 2*L - 1 - r}
	block := func(kind string, phase int) int {
		b := p.Index(fmt.Sprintf("%s%d", kind, stage[phase]))
		if b < 0 {
			t.Fatalf("placement %q has no block %s%d", p.Name, kind, stage[phase])
		}
		return b
	}
	var out, queued []schedule.Ref
	next := map[string]int{}
	for _, st := range steps {
		if st == "W" {
			if len(queued) > 0 {
				out, queued = append(out, queued[0]), queued[1:]
			}
			continue
		}
		phase := int(st[1] - '0')
		if st[0] == 'F' {
			m := next[st[:1]+st[1:]]
			next[st[:1]+st[1:]]++
			out = append(out, schedule.Ref{Block: block("f", phase), Micro: m})
			continue
		}
		key := fmt.Sprintf("B%d", phase)
		m := next[key]
		next[key]++
		in := schedule.Ref{Block: block("i", phase), Micro: m}
		w := schedule.Ref{Block: block("w", phase), Micro: m}
		if st[0] == 'Z' {
			out, queued = append(out, in), append(queued, w)
		} else {
			out = append(out, in, w)
		}
	}
	return out
}

// tessel's DualPipeV runs every rank in DeepSpeed's DualPipeVSchedule
// order, for the configurations DeepSpeed's own test replays (its
// test_dualpipev_schedule_runs_to_completion, tests/unit/runtime/pipe/
// test_pipe_schedule.py at the same commit: stages and micro-batches
// (2, 4), (2, 7), (3, 6), (4, 8), (4, 13); its one-rank cases (1, 2) and
// (1, 5) have no V placement here, which needs two devices).
func TestDualPipeVAsDeepSpeed(t *testing.T) {
	b, ok := baseline.Lookup("dualpipe-v")
	if !ok {
		t.Fatal("no dualpipe-v")
	}
	for _, c := range []struct{ L, n int }{{2, 4}, {2, 7}, {3, 6}, {4, 8}, {4, 13}} {
		p, err := placement.Builtin("v-shape", placement.Options{Devices: c.L, Chunks: 2, Order: placement.V, SplitBackward: true})
		if err != nil {
			t.Fatalf("L=%d: %v", c.L, err)
		}
		s, err := b.Build(spec.New(p, c.n))
		if err != nil {
			t.Fatalf("L=%d n=%d: %v", c.L, c.n, err)
		}
		orders := schedule.Orders(s)
		for r := range c.L {
			want := refs(t, p, c.L, r, deepSpeedDualPipeV(c.L, r, c.n))
			d := p.Blocks[p.Index(fmt.Sprintf("f%d", r))].Devices[0]
			if !slices.Equal(orders[d], want) {
				t.Errorf("L=%d n=%d rank %d (device %d):\n tessel    %v\n DeepSpeed %v", c.L, c.n, r, d, orders[d], want)
			}
			if len(want) != 6*c.n {
				t.Errorf("L=%d n=%d rank %d: DeepSpeed's order has %d computes, want %d", c.L, c.n, r, len(want), 6*c.n)
			}
		}
	}
}
