package realcost_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/realcost"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

var (
	autoTable = flag.String("realcost.auto-table", "", "write BenchmarkAuto's rows as a markdown table to this `file`")
	autoLimit = flag.Duration("realcost.time-limit", 0, "run BenchmarkAuto's searches with this time limit (search.Options.UseTime) instead of the default effort")
)

// autoRow is one case of the zero-bubble auto-scheduler's family.
type autoRow struct {
	c                        realcost.AutoCase
	heuristic, tessel, lower int
	seconds                  float64
}

func (r autoRow) ratio() float64 { return float64(r.tessel) / float64(r.heuristic) }

// runAuto searches c with opt (within limit, using it, where limit > 0)
// and fails where the search ends later than the greedy at the same costs
// and budgets.
func runAuto(t testing.TB, c realcost.AutoCase, opt search.Options, limit time.Duration) autoRow {
	t.Helper()
	r := autoRow{c: c, heuristic: schedule.Makespan(c.Heuristic)}
	ctx := context.Background()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
		opt.UseTime = true
	}
	t0 := time.Now()
	res, err := search.Run(ctx, spec.New(c.Placement, c.MicroBatches), opt)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	r.seconds = time.Since(t0).Seconds()
	r.tessel, r.lower = res.Makespan(), res.Bounds.Makespan
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	if r.tessel > r.heuristic {
		t.Errorf("%s: tessel %d, worse than the zero-bubble auto-scheduler's %d", c.Name, r.tessel, r.heuristic)
	}
	return r
}

func median(xs []float64) float64 {
	xs = append([]float64(nil), xs...)
	sort.Float64s(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// TestAutoFamily: on the family's cases of 4 and 6 stages, with the
// solver's calls capped low (deterministic), the search never ends later
// than the zero-bubble auto-scheduler's greedy at the same costs and
// budgets, and the median of tessel / greedy is below 1.
func TestAutoFamily(t *testing.T) {
	testskip.Short(t, "searches six cases")
	var ratios []float64
	for _, s := range realcost.AutoSpecs() {
		if s.Stages > 6 {
			continue
		}
		c, err := realcost.BuildAuto(s)
		if err != nil {
			t.Fatal(err)
		}
		r := runAuto(t, c, quick, 0)
		ratios = append(ratios, r.ratio())
		t.Logf("%s: greedy %d, tessel %d, lower bound %d", c.Name, r.heuristic, r.tessel, r.lower)
	}
	if m := median(ratios); m >= 1 {
		t.Errorf("median tessel / greedy %.4f, want below 1 (%v)", m, ratios)
	}
}

var (
	autoMu   sync.Mutex
	autoRows []autoRow
)

// BenchmarkAuto runs the search on every case of the zero-bubble
// auto-scheduler's family (realcost.AutoSpecs) with its default options,
// or with -realcost.time-limit T using T, and reports the greedy's
// makespan, tessel's and the lower bound. It fails a case where tessel
// ends later than the greedy. With -realcost.auto-table FILE it writes the
// rows (docs/never-lose.md).
func BenchmarkAuto(b *testing.B) {
	for _, s := range realcost.AutoSpecs() {
		c, err := realcost.BuildAuto(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name, func(b *testing.B) {
			var r autoRow
			for b.Loop() {
				r = runAuto(b, c, search.Options{}, *autoLimit)
			}
			b.ReportMetric(float64(r.heuristic), "greedy")
			b.ReportMetric(float64(r.tessel), "makespan")
			b.ReportMetric(float64(r.lower), "lower-bound")
			autoMu.Lock()
			autoRows = append(autoRows, r)
			autoMu.Unlock()
		})
	}
}

// autoMarkdown is the family's table and its median ratio.
func autoMarkdown(rows []autoRow) string {
	var sb strings.Builder
	sb.WriteString("| case | budgets | lower bound | ZB auto (greedy) | tessel | tessel / greedy | gap | time |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	var ratios []float64
	better := 0
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %v | %d | %d | %d | %.3f | %.1f%% | %.2f s |\n", r.c.Name, r.c.Placement.Capacities, r.lower, r.heuristic, r.tessel,
			r.ratio(), 100*float64(r.tessel-r.lower)/float64(r.lower), r.seconds)
		ratios = append(ratios, r.ratio())
		if r.tessel < r.heuristic {
			better++
		}
	}
	fmt.Fprintf(&sb, "\nShorter than the greedy on %d of %d cases, never longer; median tessel / greedy %.3f.\n", better, len(rows), median(ratios))
	return sb.String()
}

func writeAutoTable() error {
	if *autoTable == "" || len(autoRows) == 0 {
		return nil
	}
	return os.WriteFile(*autoTable, []byte(autoMarkdown(autoRows)), 0o644)
}
