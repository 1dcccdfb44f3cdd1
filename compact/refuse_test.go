package compact_test

import (
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// TestRefusals: what the rules cannot time together is refused by their
// Refuse (rule/hostchan, rule/latency, rule/fsdp) in the compaction's
// words, the release times first, a kept schedule's decisions on queued
// links once it is verified.
func TestRefusals(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	one, err := baseline.OneFOneB(spec.New(p, 4))
	if err != nil {
		t.Fatal(err)
	}
	rec := p.WithRecompute()
	recomputed, err := baseline.OneFOneBRecompute(spec.New(rec, 4))
	if err != nil {
		t.Fatal(err)
	}
	// The recomputing schedule on queued links (the same times: it
	// verifies, with its link order, where the transfers take no time).
	queued := placementtest.WithTransfers(rec.Clone(), 0, true)
	onQueued := *recomputed
	onQueued.Spec = spec.New(queued, 4)
	broken := onQueued
	broken.Instances = append([]schedule.Instance(nil), onQueued.Instances...)
	broken.Instances[0].Start += 1000
	lat := spec.New(p, 4)
	lat.Latency = 1000
	orders := schedule.Orders(one)
	release := map[schedule.Ref]int{{Block: 0, Micro: 1}: 5}
	pair := []schedule.Pair{{Forward: schedule.Ref{Block: 0, Micro: 1}, Backward: schedule.Ref{Block: len(p.Blocks) - 1, Micro: 0}}}
	const releaseWords = "compact: release times with decisions or a latency budget"
	for _, tc := range []struct {
		name string
		sp   spec.Spec
		keep compact.Keep
		want string
	}{
		{"release with a schedule", spec.New(p, 4), compact.Keep{From: one, Release: release}, releaseWords},
		{"release under a budget", lat, compact.Keep{Orders: orders, Release: release}, releaseWords},
		{"release first", lat, compact.Keep{Orders: orders, Release: release, Pairs: pair}, releaseWords},
		{"pairs under a budget", lat, compact.Keep{Orders: orders, Pairs: pair}, "compact: overlapped pairs under a latency budget"},
		{"release out of range", spec.New(p, 4), compact.Keep{Orders: orders, Release: map[schedule.Ref]int{{Block: 0, Micro: 4}: 1}}, "compact: release time of an instance out of range (block 0, micro-batch 4)"},
		{"decisions on queued links", onQueued.Spec, compact.Keep{From: &onQueued, Built: true}, "compact: a schedule that offloads or recomputes on links that carry one transfer at a time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compact.Compact(tc.sp, tc.keep)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A kept schedule that fails verification is named so first.
	if _, err := compact.Compact(broken.Spec, compact.Keep{From: &broken}); err == nil || err.Error() == "compact: a schedule that offloads or recomputes on links that carry one transfer at a time" {
		t.Fatalf("a broken schedule on queued links: error %v, want its verification's", err)
	}
}
