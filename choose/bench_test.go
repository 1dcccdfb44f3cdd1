package choose_test

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// She et al. §V-B: the seeded 200-operator DAG on 2 chips, transfers as
// long as an operator on average, searched as it is (target 0) and
// coarsened to 40. Each reports its makespan; both must be verified,
// within 0.6 of the one-chip time and no worse than HEFT's. Run both and
// compare ns/op for the speed-up of coarsening (at least 5×) and the
// makespans for its loss (at most 10 %, the expanded one before HEFT's is
// kept: "expanded" metric):
//
//	go test ./choose -run '^$' -bench DAG200 -benchtime 1x
func BenchmarkDAG200(b *testing.B) {
	p := placementtest.DAG(b, 200, 2)
	sum := 0
	for _, bl := range p.Blocks {
		sum += bl.Time
	}
	h, err := heft.Run(p, heft.Options{})
	if err != nil {
		b.Fatal(err)
	}
	hm := schedule.Makespan(h.Schedule)
	for _, tc := range []struct {
		name   string
		target int
	}{{"search", 0}, {"coarsen 40", 40}} {
		b.Run(tc.name, func(b *testing.B) {
			var r *choose.Result
			for b.Loop() {
				if r, err = choose.Run(context.Background(), spec.New(p, 1), choose.Options{Coarsen: tc.target}); err != nil {
					b.Fatal(err)
				}
			}
			if err := verify.Schedule(r.Schedule); err != nil {
				b.Fatal(err)
			}
			ms := schedule.Makespan(r.Schedule)
			if float64(ms) > 0.6*float64(sum) || ms > hm {
				b.Fatalf("makespan %d: one chip %d, HEFT %d", ms, sum, hm)
			}
			b.ReportMetric(float64(ms), "makespan")
			if r.Coarsened != nil {
				b.ReportMetric(float64(r.Coarsened.Makespan), "expanded")
			}
		})
	}
}
