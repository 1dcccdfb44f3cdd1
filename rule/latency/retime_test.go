package latency_test

import (
	"testing"

	"github.com/tessel-pp/tessel/compact/system"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/latency"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// ConstrainBack adds one edge back from each micro-batch's sink to its
// source, weighted t_sink − budget, and nothing without a budget: on
// the inference v-shape, solved with the chain's dependencies, the
// second micro-batch's source waits until its sink can end within the
// budget after a given delay of the sink.
func TestConstrainBack(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2
	k := len(p.Blocks)
	v := func(r schedule.Ref) int { return r.Micro*k + r.Block }
	sp := spec.New(p, n)
	for _, budget := range []int{0, 5} {
		sp.Latency = budget
		sys := &system.System{Vars: k * n}
		if err := (latency.Rule{}).ConstrainBack(&rule.Retiming{Spec: sp, Var: v, Sys: sys}); err != nil {
			t.Fatal(err)
		}
		want := 0
		if budget > 0 {
			want = n * len(p.LatencyPairs())
		}
		if len(sys.Cons) != want {
			t.Fatalf("budget %d: %d constraints, want %d", budget, len(sys.Cons), want)
		}
		for _, c := range sys.Cons {
			if c.W >= 0 || c.Y < 0 {
				t.Errorf("budget %d: constraint %+v is not an edge back of weight t_sink − budget < 0", budget, c)
			}
		}
	}
	// The chain f0 → f1 of each micro-batch, the sink of micro-batch 1
	// held until 10: its source must start at 10 + t_f1 − 5 at least.
	sys := &system.System{Vars: k * n}
	for _, d := range p.Deps {
		for m := range n {
			sys.Add(v(schedule.Ref{Block: d.To, Micro: m}), v(schedule.Ref{Block: d.From, Micro: m}), p.Delay(d))
		}
	}
	sink := p.LatencyPairs()[0].Sink
	sys.Least(v(schedule.Ref{Block: sink, Micro: 1}), 10)
	sp.Latency = 5
	if err := (latency.Rule{}).ConstrainBack(&rule.Retiming{Spec: sp, Var: v, Sys: sys}); err != nil {
		t.Fatal(err)
	}
	start, err := sys.Solve()
	if err != nil {
		t.Fatal(err)
	}
	src := p.LatencyPairs()[0].Source
	if got, want := start[v(schedule.Ref{Block: src, Micro: 1})], 10+p.Blocks[sink].Time-5; got != want {
		t.Errorf("source of micro-batch 1 starts at %d, want %d (starts %v)", got, want, start)
	}
	if start[v(schedule.Ref{Block: src, Micro: 0})] != 0 {
		t.Errorf("micro-batch 0 delayed: %v", start)
	}
}
