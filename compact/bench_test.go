package compact_test

import (
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// BenchmarkCompact times the re-timing of a 1F1B schedule of a v-shape
// at 10,000 micro-batches on each of its paths: the orders alone (every
// list schedule's), with links that carry one transfer at a time, under
// a latency budget, and a schedule that recomputes (Keep.From).
func BenchmarkCompact(b *testing.B) {
	const n = 10000
	p := placementtest.Builtin(b, "v-shape", placement.Options{})
	chans := placementtest.WithTransfers(p.Clone(), 1, true)
	rec := p.WithRecompute()
	one, err := baseline.OneFOneB(spec.New(p, n))
	if err != nil {
		b.Fatal(err)
	}
	oneChans, err := baseline.OneFOneB(spec.New(chans, n))
	if err != nil {
		b.Fatal(err)
	}
	recomputed, err := baseline.OneFOneBRecompute(spec.New(rec, n))
	if err != nil {
		b.Fatal(err)
	}
	lat := spec.New(p, n)
	lat.Latency = 2 * p.Devices * (p.Blocks[0].Time + p.Blocks[len(p.Blocks)-1].Time)
	cases := []struct {
		name string
		sp   spec.Spec
		keep compact.Keep
	}{
		{"orders", spec.New(p, n), compact.Keep{Orders: schedule.Orders(one)}},
		{"channels", spec.New(chans, n), compact.Keep{Orders: schedule.Orders(oneChans)}},
		{"latency", lat, compact.Keep{Orders: schedule.Orders(one)}},
		{"recompute", spec.New(rec, n), compact.Keep{From: recomputed, Built: true}},
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("%s/N=%d", c.name, n), func(b *testing.B) {
			for b.Loop() {
				if _, err := compact.Compact(c.sp, c.keep); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
