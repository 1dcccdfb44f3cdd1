package report

import (
	"bytes"
	"context"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

func TestReplanReportWriteText(t *testing.T) {
	p := &placement.Placement{Name: "v-shape", Devices: 4}
	for _, c := range []struct {
		name string
		r    ReplanReport
		want string
	}{
		{"orders broken, fresh", ReplanReport{MicroBatches: 8, Memory: 4, Old: 44, Makespan: 90, LowerBound: 77, Seconds: 0.5, Source: "list/gradient-first", Fresh: textfmt.Ptr(91), FreshSeconds: 1.25},
			"tessel replan: v-shape, 4 devices, 8 micro-batches, memory 4, on the new cluster\n\n" +
				"old schedule   makespan 44 on its own cluster; its orders on the new one: they break a memory budget there\n" +
				"replanned      makespan 90 (lower bound 77) in 0.500s, built by list/gradient-first\n" +
				"fresh search   makespan 91 in 1.250s\n" +
				"verified       yes\n"},
		{"repetend kept", ReplanReport{MicroBatches: 8, Old: 44, OldOrders: textfmt.Ptr(130), OldRepetend: textfmt.Ptr(96), OldRepetendKept: true, Makespan: 94, LowerBound: 77, Source: "repetend"},
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

// The report holds the replan's figures: v-shape searched, then replanned
// on a cluster with one slow link.
func TestNewReplanReport(t *testing.T) {
	ctx := context.Background()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	old, err := search.Run(ctx, spec.Spec{Placement: p, MicroBatches: 8, Memory: 4}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Load("../testdata/clusters/four-slow-link.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := search.Replan(ctx, old.Schedule, q, c, search.ReplanOptions{Effort: 5000})
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReplanReport(old.Schedule, q, res, 0)
	if rep.Makespan != res.Makespan() || rep.Old != old.Makespan() || rep.OldOrders != res.OldOrders || rep.LowerBound != res.Bounds.Makespan ||
		rep.MicroBatches != 8 || rep.Memory != 4 || !rep.Valid || rep.Fresh != nil {
		t.Errorf("report %+v of replan %d (old %d)", rep, res.Makespan(), old.Makespan())
	}
}
