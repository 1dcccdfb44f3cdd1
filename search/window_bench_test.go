package search

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// BenchmarkWindowCurve times the default search as N grows from 128 to
// 65,536 on the two placements whose search cost should not follow N
// (the Tessel paper: the repetend is searched once and repeated): m-shape
// on 8 devices at memory 8, and the split V (two chunks per device in V
// order, backward split) on 8 devices. It reports seconds per search.
//
//	go test ./search -run '^$' -bench WindowCurve -benchtime 1x
func BenchmarkWindowCurve(b *testing.B) {
	type shape struct {
		name   string
		opt    placement.Options
		memory int
	}
	shapes := []shape{
		{"m-shape-d8-m8", placement.Options{Devices: 8}, 8},
		{"v-shape-v2-split-d8", placement.Options{Devices: 8, SplitBackward: true, Chunks: 2, Order: placement.V}, 0},
	}
	for _, sh := range shapes {
		base := "m-shape"
		if sh.opt.SplitBackward {
			base = "v-shape"
		}
		p, err := placement.Builtin(base, sh.opt)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{128, 512, 1024, 4096, 16384, 65536} {
			b.Run(fmt.Sprintf("%s/N=%d", sh.name, n), func(b *testing.B) {
				sp := spec.Spec{Placement: p, MicroBatches: n, Memory: sh.memory}
				var total time.Duration
				for b.Loop() {
					t := time.Now()
					res, err := Run(context.Background(), sp, Options{})
					total += time.Since(t)
					if err != nil {
						b.Fatal(err)
					}
					if res.Schedule == nil || res.Schedule.MicroBatches != n {
						b.Fatal("no schedule of N micro-batches")
					}
				}
				b.ReportMetric(total.Seconds()/float64(b.N), "s/search")
			})
		}
	}
}
