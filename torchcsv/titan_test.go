package torchcsv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// The bundle's stage-to-rank map is the one torchtitan derives for its
// style (pipeline_module_split: loop, rank + s·ranks; V, rank and
// S−1−rank), for a V placement searched by tessel and for loop ones.
func TestTitanStageMap(t *testing.T) {
	for _, tc := range []struct {
		opt             placement.Options
		style, schedule string
		stagesPerRank   int
	}{
		{placement.Options{Devices: 4, Chunks: 2, Order: placement.V}, torchcsv.StyleV, "ZBVZeroBubble", 2},
		{placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true}, torchcsv.StyleV, "ZBVZeroBubble", 2},
		{placement.Options{Devices: 4, Chunks: 2, Order: placement.Loop}, torchcsv.StyleLoop, "Interleaved1F1B", 2},
		{placement.Options{Devices: 2, Chunks: 3, Order: placement.Loop}, torchcsv.StyleLoop, "Interleaved1F1B", 3},
		{placement.Options{Devices: 4}, torchcsv.StyleLoop, "1F1B", 1},
	} {
		p, err := placement.Builtin("v-shape", tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 2 * p.Devices}, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if b.Style != tc.style || b.Schedule != tc.schedule || b.StagesPerRank != tc.stagesPerRank {
			t.Errorf("%s: style %s, schedule %s, %d per rank", p.Name, b.Style, b.Schedule, b.StagesPerRank)
		}
		for r := range b.Ranks {
			ids, err := torchcsv.TitanStageIDs(r, b.Ranks, b.Stages, b.Style)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ids {
				if b.StageRank[s] != r {
					t.Errorf("%s: torchtitan puts stage %d on rank %d, the CSV on rank %d", p.Name, s, r, b.StageRank[s])
				}
			}
		}
		if !strings.Contains(string(b.Config("s.csv")), `pipeline_parallel_schedule = "`+tc.schedule+`"`) {
			t.Errorf("%s: config\n%s", p.Name, b.Config("s.csv"))
		}
	}
}

// What torchtitan cannot build is refused in one line.
func TestTitanRefuses(t *testing.T) {
	imported := func(csv string) *torchcsv.Table {
		tab, err := torchcsv.Parse([]byte(csv))
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	x, err := placement.Builtin("x-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: x, MicroBatches: 4, Memory: 8}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		label, csv, err string
	}{
		{"three stages on two ranks", "0F0,1F0,1B0,0B0\n2F0,2B0\n", "3 stages on 2 ranks: torchtitan builds the same number of stages on every rank"},
		{"neither loop nor V", "0F0,1F0,1B0,0B0\n2F0,3F0,3B0,2B0\n", "stage-to-rank map [0 0 1 1] is neither torchtitan's loop"},
	} {
		s, err := torchcsv.Import(imported(tc.csv), torchcsv.DefaultImportOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = torchcsv.Titan(s, torchcsv.TitanOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.label, err, tc.err)
		}
	}
	if _, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{}); err == nil || !strings.Contains(err.Error(), "the forward blocks form 2 chains") {
		t.Errorf("x-shape: got %v", err)
	}
}
