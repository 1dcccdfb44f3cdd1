package study_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/golden"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/study"
)

// smallCompare is a comparison that runs in about a second: k-shape has
// a zero-bubble repetend at N_R 3, and GPipe exceeds the budget.
func smallCompare(format string) study.CompareOptions {
	return study.CompareOptions{
		Placement:    spec.Source{Name: "k-shape", Devices: 4, ForwardTime: 1, BackwardTime: 3},
		MicroBatches: 8, Memory: 6, Optimal: true, OptimalN: 2, Format: format, MaskTimes: true,
	}
}

// TestCompareGolden pins the whole output of every format.
func TestCompareGolden(t *testing.T) {
	for _, format := range textfmt.Formats() {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			if err := study.Compare(context.Background(), smallCompare(format), &out); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "compare-k-shape."+textfmt.Ext(format), out.Bytes())
		})
	}
}

// TestCompareRows checks the claims behind the golden file, so that a
// wrong golden file cannot be accepted silently.
func TestCompareRows(t *testing.T) {
	var out bytes.Buffer
	if err := study.Compare(context.Background(), smallCompare("json"), &out); err != nil {
		t.Fatal(err)
	}
	var c compare.Comparison
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	rows := map[string]compare.Row{}
	for _, r := range c.Rows {
		rows[r.Method] = r
	}
	for method, want := range map[string]struct {
		placement, status string
		budget            bool
	}{
		"GPipe":          {"k-shape", compare.StatusOK, false},            // 8 forwards in flight on every device
		"1F1B":           {"k-shape", compare.StatusNotApplicable, false}, // every row on the placement compared
		"Chimera-direct": {"k-shape", compare.StatusNotApplicable, false},
		"1F1B+":          {"k-shape", compare.StatusNotApplicable, false},
		"Tessel":         {"k-shape", compare.StatusOK, true},
		"time-optimal":   {"k-shape", compare.StatusOK, true},
	} {
		r, ok := rows[method]
		if !ok {
			t.Errorf("no row %s", method)
			continue
		}
		if r.Placement != want.placement || r.Status != want.status {
			t.Errorf("%s: placement %s status %s, want %s %s", method, r.Placement, r.Status, want.placement, want.status)
		}
		if r.Status == compare.StatusOK && *r.BudgetRespected != want.budget {
			t.Errorf("%s: budget respected %v, want %v", method, *r.BudgetRespected, want.budget)
		}
		if r.Status == compare.StatusOK && want.budget {
			for _, m := range r.PeakMemory {
				if m > 6 {
					t.Errorf("%s: peak memory %v over the budget 6", method, r.PeakMemory)
				}
			}
		}
	}
	if r := rows["Tessel"]; r.RepetendBubbleRate == nil || *r.RepetendBubbleRate != 0 || r.Seconds == nil {
		t.Errorf("Tessel on k-shape: repetend bubble rate %v, seconds %v; want 0 and a time", r.RepetendBubbleRate, r.Seconds)
	}
	if r := rows["time-optimal"]; r.MicroBatches != 2 || r.Proven == nil || !*r.Proven {
		t.Errorf("time-optimal: N %d, proven %v; want 2, proven", r.MicroBatches, r.Proven)
	}
}

// TestCompareNoRepetend: a budget nothing fits shows "none" for the
// searches, not a failure of the whole table, and says what one
// micro-batch needs.
func TestCompareNoRepetend(t *testing.T) {
	opts := smallCompare("table")
	opts.Memory = 1
	var out bytes.Buffer
	if err := study.Compare(context.Background(), opts, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no schedule fits: device 0 needs 2 per micro-batch", "no schedule fits the memory budget", "does not fit: device 0 needs 2 per micro-batch"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCompareUsage(t *testing.T) {
	ok := smallCompare("table")
	for _, c := range []struct {
		change func(*study.CompareOptions)
		want   string
	}{
		{func(o *study.CompareOptions) { o.Format = "xml" }, `unknown --format "xml"`},
		{func(o *study.CompareOptions) { o.MicroBatches = 0 }, "--micro-batches must be at least 1"},
		{func(o *study.CompareOptions) { o.Memory = -1 }, "--memory must be at least 0"},
		{func(o *study.CompareOptions) { o.OptimalN = 0 }, "--optimal-micro-batches must be at least 1"},
		{func(o *study.CompareOptions) { o.Placement.Name = "w-shape" }, "w-shape"},
		{func(o *study.CompareOptions) { o.TableII, o.Placement.File = true, "x.json" }, "--table-ii uses the built-in placements"},
	} {
		opts := ok
		c.change(&opts)
		err := study.Compare(context.Background(), opts, &bytes.Buffer{})
		if !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want a usage error with %q, got %v", c.want, err)
		}
	}
}

// TestTableII pins what tessel compare --table-ii measures.
//
// Reference: §VI-B, Table II: on 4 devices 1F1B (v-shape) and Tessel have
// no bubbles on every model, 1F1B+ has 25% on GPT (m-shape) and × on
// Flava (k-shape). Chimera-direct (paper 20%, ours 7/23) and 1F1B+ on mT5
// (paper 20%, ours 1/3) differ; baseline/paper_test.go explains why.
func TestTableII(t *testing.T) {
	opts := study.CompareOptions{Placement: spec.Source{Devices: 4, ForwardTime: 1, BackwardTime: 3}, Format: "json", TableII: true}
	var out bytes.Buffer
	if err := study.Compare(context.Background(), opts, &out); err != nil {
		t.Fatal(err)
	}
	var got compare.TableIIResult
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	const x = -1.0                 // ×
	want := map[string][4]float64{ // 1F1B, Chimera-direct, 1F1B+, Tessel
		"GPT":   {0, 7.0 / 23, 0.25, 0},
		"mT5":   {0, 7.0 / 23, 1.0 / 3, 0},
		"Flava": {0, 7.0 / 23, x, 0},
	}
	if len(got.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(want))
	}
	for _, r := range got.Rows {
		for k, c := range r.Cells {
			w := want[r.Model][k]
			switch {
			case w == x && c.BubbleRate != nil:
				t.Errorf("%s %s: %v, want ×", r.Model, c.Method, *c.BubbleRate)
			case w != x && (c.BubbleRate == nil || math.Abs(*c.BubbleRate-w) > 1e-6):
				t.Errorf("%s %s: %v, want %.4f", r.Model, c.Method, c.BubbleRate, w)
			}
		}
	}
}

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
		spec spec.Source
		n, m int
		rows map[string]want
	}{
		{"split v-shape, 4 devices", spec.Source{Name: "v-shape", Devices: 4, SplitBackward: true}, 8, 0, map[string]want{
			"ZB-H1": {"v-shape-split", 27, 4}, "ZB-H2": {"v-shape-split", 27, 7},
		}},
		{"split v-shape, 8 devices", spec.Source{Name: "v-shape", Devices: 8, SplitBackward: true}, 16, 0, map[string]want{
			"ZB-H1": {"v-shape-split", 55, 8}, "ZB-H2": {"v-shape-split", 55, 15},
		}},
		{"V placement, 4 devices", spec.Source{Name: "v-shape", Devices: 4, SplitBackward: true, Chunks: 2, Order: "v"}, 8, 0, map[string]want{
			"ZB-V": {"v-shape-v2-split", 51, 8}, "DualPipeV": {"v-shape-v2-split", 51, 9},
		}},
		{"DualPipe placement, PP = 4", spec.Source{Name: "dualpipe", Devices: 4}, 5, 5, map[string]want{
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
