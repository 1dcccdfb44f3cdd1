package search_test

import (
	"context"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/realcost"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// TestUseTimeInEveryMode: with time to use (tessel search --time-limit T)
// the search does not return before T while its schedule is more than 1 %
// above the lower bound and not proven, whatever the placement carries —
// per-stage costs and transfers, links that queue, decisions, a latency
// budget, overlapped pairs (devices to choose: package choose's
// TestUseTimeChoosingDevices) — and it answers after T
// with a verified schedule. (The bound on the answer's delay is loose
// here, the machine being shared: a solver call under load may answer
// its interruption late; the benchmarks measure the delay.)
func TestUseTimeInEveryMode(t *testing.T) {
	testskip.Short(t, "six searches of a few seconds each")
	must := func(p *placement.Placement, err error) *placement.Placement {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	auto := func(channels bool) *placement.Placement {
		c, err := realcost.BuildAuto(realcost.AutoSpecs()[4])
		if err != nil {
			t.Fatal(err)
		}
		c.Placement.QueuedLinks = channels
		return c.Placement
	}
	overlapped := func(name string, d int) *placement.Placement {
		return must(must(placement.Builtin(name, placement.Options{Devices: d})).WithOverlap(&placement.Overlap{Factor: 0.7}))
	}
	for _, c := range []struct {
		name string
		sp   spec.Spec
	}{
		{"per-stage costs and transfers", spec.New(auto(false), 18)},
		{"links that queue", spec.New(auto(true), 18)},
		{"offload", spec.Spec{Placement: must(placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})).WithOffload(2),
			MicroBatches: 8, Memory: 1, Allowed: spec.Decisions{Offload: true}}},
		{"latency budget", spec.Spec{Placement: must(placement.Builtin("x-shape", placement.Options{Devices: 8})), MicroBatches: 16, Latency: 60}},
		{"overlapped pairs", spec.Spec{Placement: overlapped("v-shape", 4), MicroBatches: 16, Memory: 4}},
		{"barriers under memory", spec.Spec{Placement: must(placement.Builtin("nn-shape", placement.Options{Devices: 8})), MicroBatches: 16, Memory: 8}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const limit = 3 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			opt := search.Options{UseTime: true}
			t0 := time.Now()
			last := ""
			opt.Progress = func(pr search.Progress) {
				if pr.Stage != last {
					t.Logf("%v %s %d", time.Since(t0), pr.Stage, pr.BestMakespan)
					last = pr.Stage
				}
			}
			res, err := search.Run(ctx, c.sp, opt)
			took := time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := verify.Schedule(res.Schedule); err != nil {
				t.Fatal(err)
			}
			open := res.Gap()*100 > res.Makespan() && !(res.Proven() && (res.Gap() <= 0 || res.TO != nil))
			if open && took < limit {
				t.Errorf("returned after %v of %v: makespan %d, lower bound %d, not proven", took, limit, res.Makespan(), res.Bounds.Makespan)
			}
			if took > 3*limit {
				t.Errorf("returned after %v of %v", took, limit)
			}
			t.Logf("%v: makespan %d, lower bound %d, %s", took, res.Makespan(), res.Bounds.Makespan, res.Source)
		})
	}
}
