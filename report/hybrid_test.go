package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/hybrid"
)

// Every time in the table of a model with units carries the unit: a row
// under the column names gives it to each time column (and to none of
// the counts); a model without units prints no such row.
func TestHybridUnits(t *testing.T) {
	l := hybrid.Layout{DP: 2, TP: 2, PP: 2, MicroBatches: 8, MicroBatchSize: 1, Time: 2149.09, Pipeline: 2048,
		Breakdown: hybrid.Breakdown{Compute: 1957.21, TPComm: 90.79}, Schedule: "1f1b",
		Stages: [][]string{{"a"}, {"b"}}, Groups: [][]int{{0, 1}, {2, 3}}}
	for _, chunks := range [][]int{nil, {1, 2}} {
		for _, unit := range []string{"ms", ""} {
			r := &hybrid.Result{Model: "m", Devices: 8, MicroBatches: 8, TimeUnit: 0.05, Unit: unit, ChunksTried: chunks,
				Plans: []hybrid.Layout{l}, PrunedBy: map[string]int{}, Best: &l, Baseline: &l}
			var b bytes.Buffer
			Hybrid(&b, r, 0)
			lines := strings.Split(b.String(), "\n")
			head := -1
			for i, s := range lines {
				if strings.HasPrefix(s, "rank") {
					head = i
				}
			}
			if head < 0 {
				t.Fatalf("no header:\n%s", b.String())
			}
			under := lines[head+1]
			if unit == "" {
				if strings.Contains(under, " ms") || !strings.HasPrefix(under, "1 ") {
					t.Errorf("chunks %v, no unit: a unit row:\n%s", chunks, b.String())
				}
				continue
			}
			// Each unit ends where its column's name ends.
			names := []string{"time", "pipeline", "compute", "tp comm", "transfer", "bubble", "dp exposed"}
			if got := strings.Count(under, "ms"); got != len(names) {
				t.Errorf("chunks %v: %d units under the header, want %d:\n%s", chunks, got, len(names), b.String())
			}
			for _, n := range names {
				end := strings.Index(lines[head], n) + len(n)
				if end < 2 || len(under) < end || under[end-2:end] != "ms" {
					t.Errorf("chunks %v: no unit under %q:\n%s", chunks, n, b.String())
				}
			}
			if !strings.Contains(b.String(), "2149.09 ms per iteration") {
				t.Errorf("best line without its unit:\n%s", b.String())
			}
		}
	}
}
