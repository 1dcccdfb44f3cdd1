package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
)

// TestCompareOptimalIsTesselOptimal: the time-optimal row of tessel
// compare --optimal and tessel optimal are one search (search.Optimal,
// started from the constructions and verified): on every built-in they
// give the same makespan, peak memory and proof. (The Tessel paper's
// §III-B time-optimal baseline, TO.)
func TestCompareOptimalIsTesselOptimal(t *testing.T) {
	for _, name := range placement.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "optimal", "-p", name, "-n", "3", "-m", "8", "--json")
			if code != 0 {
				t.Fatalf("optimal: exit %d: %s", code, errOut)
			}
			var sum report.Summary
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatal(err)
			}
			code, out, errOut = runCLI(t, "compare", "-p", name, "-n", "4", "-m", "8", "--optimal", "--optimal-micro-batches", "3", "--format", "json")
			if code != 0 {
				t.Fatalf("compare: exit %d: %s", code, errOut)
			}
			var c compare.Comparison
			if err := json.Unmarshal([]byte(out), &c); err != nil {
				t.Fatal(err)
			}
			r := c.Rows[len(c.Rows)-1]
			if r.Method != "time-optimal" || r.Status != compare.StatusOK {
				t.Fatalf("last row %+v, want the time-optimal one", r)
			}
			if *r.Makespan != sum.Makespan || *r.Proven != sum.Proven || fmt.Sprint(r.PeakMemory) != fmt.Sprint(sum.PeakMemory) {
				t.Errorf("compare --optimal: makespan %d, proven %v, peak %v; tessel optimal: %d, %v, %v",
					*r.Makespan, *r.Proven, r.PeakMemory, sum.Makespan, sum.Proven, sum.PeakMemory)
			}
		})
	}
}
