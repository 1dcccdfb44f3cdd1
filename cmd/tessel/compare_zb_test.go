package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/study"
)

// TestCompareZeroBubble checks that compare lists the zero-bubble family,
// verified, with its makespans and peak memory, on the split v-shape (4
// and 8 devices), the V placement and the DualPipe placement (She et al.
// §V-A, PP = 4: 5 micro-batch pairs, memory PP + 1), and that the other
// rows follow the placement (1F1B moves to the split v-shape).
func TestCompareZeroBubble(t *testing.T) {
	type want struct {
		placement string
		makespan  int
		peak      int // on every device
	}
	cases := []struct {
		name string
		spec placementSpec
		n, m int
		rows map[string]want
	}{
		{"split v-shape, 4 devices", placementSpec{Name: "v-shape", Devices: 4, SplitBackward: true}, 8, 0, map[string]want{
			"ZB-H1": {"v-shape-split", 27, 4}, "ZB-H2": {"v-shape-split", 27, 7},
		}},
		{"split v-shape, 8 devices", placementSpec{Name: "v-shape", Devices: 8, SplitBackward: true}, 16, 0, map[string]want{
			"ZB-H1": {"v-shape-split", 55, 8}, "ZB-H2": {"v-shape-split", 55, 15},
		}},
		{"V placement, 4 devices", placementSpec{Name: "v-shape", Devices: 4, SplitBackward: true, Chunks: 2, Order: "v"}, 8, 0, map[string]want{
			"ZB-V": {"v-shape-v2-split", 51, 8}, "DualPipeV": {"v-shape-v2-split", 51, 9},
		}},
		{"DualPipe placement, PP = 4", placementSpec{Name: "dualpipe", Devices: 4}, 5, 5, map[string]want{
			"DualPipe": {"dualpipe", 31, 5},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spec.ForwardTime, c.spec.BackwardTime = placement.DefaultForwardTime, placement.DefaultBackwardTime
			var out bytes.Buffer
			opts := study.CompareOptions{Placement: c.spec, MicroBatches: c.n, Memory: c.m, OptimalN: 1, TimeLimit: 20 * time.Second, Format: "json", MaskTimes: true}
			if err := study.Compare(context.Background(), opts, &out); err != nil {
				t.Fatal(err)
			}
			var cmp compare.Comparison
			if err := json.Unmarshal(out.Bytes(), &cmp); err != nil {
				t.Fatal(err)
			}
			rows := map[string]compare.Row{}
			for _, r := range cmp.Rows {
				rows[r.Method] = r
			}
			for method, w := range c.rows {
				r, ok := rows[method]
				if !ok || r.Status != compare.StatusOK {
					t.Fatalf("%s: no row, or not ok: %+v", method, r)
				}
				if r.Placement != w.placement || *r.Makespan != w.makespan || r.RepetendBubbleRate == nil || r.BubbleRate == nil {
					t.Errorf("%s: on %s makespan %d, rates %v %v; want %s, %d, both rates", method, r.Placement, *r.Makespan, r.RepetendBubbleRate, r.BubbleRate, w.placement, w.makespan)
				}
				if slices.Max(r.PeakMemory) != w.peak || slices.Min(r.PeakMemory) != w.peak {
					t.Errorf("%s: peak memory %v, want %d on every device", method, r.PeakMemory, w.peak)
				}
			}
			if r := rows["1F1B"]; r.Status == compare.StatusOK && r.Placement != "v-shape-split" {
				t.Errorf("1F1B runs on %s, want the split v-shape", r.Placement)
			}
			if r := rows["Tessel"]; r.Status == compare.StatusOK {
				if !*r.BudgetRespected {
					t.Errorf("Tessel exceeds the budget: %v", r.PeakMemory)
				}
				t.Logf("Tessel: makespan %d, peak memory %v (%s)", *r.Makespan, r.PeakMemory, r.Note)
			}
		})
	}
}

// TestPlacementsZeroBubble checks that tessel placements shows the
// zero-bubble family with the flags that build it.
func TestPlacementsZeroBubble(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"placements", "--split-backward", "-d", "2"}, []string{"v-shape-split — ", "m-shape-split — ", "dualpipe — ", "i0 w0", "input gradient/weight gradient"}},
		{[]string{"placements", "--chunks", "2", "--order", "v", "--split-backward"}, []string{"v-shape-v2-split — ", "8 stages, 2 per device, order v", "k-shape: not available with these options: k-shape: cannot be cut into chunks"}},
		{[]string{"placements", "--chunks", "3"}, []string{"v-shape-loop3 — ", "12 stages, 3 per device, order loop"}},
		{[]string{"placements", "--input-time", "2"}, []string{"dualpipe — ", "device loads [8 8 8 8]"}},
	} {
		code, out, errOut := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !bytes.Contains([]byte(out), []byte(w)) {
				t.Errorf("%v: output lacks %q", c.args, w)
			}
		}
	}
}
