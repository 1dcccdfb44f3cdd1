package search

import (
	"bytes"
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

func TestReplanReportWriteText(t *testing.T) {
	p := &placement.Placement{Name: "v-shape", Devices: 4}
	for _, c := range []struct {
		name string
		r    ReplanReport
		want string
	}{
		{"orders broken, fresh", ReplanReport{MicroBatches: 8, Memory: 4, Old: 44, Makespan: 90, LowerBound: 77, Seconds: 0.5, Source: "list/gradient-first", Fresh: ptr(91), FreshSeconds: 1.25},
			"tessel replan: v-shape, 4 devices, 8 micro-batches, memory 4, on the new cluster\n\n" +
				"old schedule   makespan 44 on its own cluster; its orders on the new one: they break a memory budget there\n" +
				"replanned      makespan 90 (lower bound 77) in 0.500s, built by list/gradient-first\n" +
				"fresh search   makespan 91 in 1.250s\n" +
				"verified       yes\n"},
		{"repetend kept", ReplanReport{MicroBatches: 8, Old: 44, OldOrders: ptr(130), OldRepetend: ptr(96), OldRepetendKept: true, Makespan: 94, LowerBound: 77, Source: "repetend"},
			"tessel replan: v-shape, 4 devices, 8 micro-batches, memory unlimited, on the new cluster\n\n" +
				"old schedule   makespan 44 on its own cluster; its orders on the new one: 130\n" +
				"               its repetend re-timed on the new one: 96\n" +
				"replanned      makespan 94 (lower bound 77) in 0.000s, built by repetend (the old repetend's offsets, re-timed)\n" +
				"verified       yes\n"},
	} {
		var b bytes.Buffer
		c.r.WriteText(&b, p)
		if b.String() != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, b.String(), c.want)
		}
	}
}
