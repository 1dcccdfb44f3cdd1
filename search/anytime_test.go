package search

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// The search is never worse than the time-optimal search where that one
// proves its answer (the Tessel paper's §III-B, Lin et al.): nn-shape on
// 4 devices, 6 micro-batches, memory 6, is 60 (20% bubbles), which the
// lower bound with the blocks on all devices cut out proves. The
// constructions and the repetend's schedule end at 61; the windows of the
// large-neighbourhood search, within the default effort, find 60.
func TestSearchMatchesTheTimeOptimalNNShape(t *testing.T) {
	p, err := placement.Builtin("nn-shape", placement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 6, Memory: 6}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if res.Makespan() != 60 || !res.Proven() {
		t.Errorf("makespan %d (lower bound %d, proven %v, built by %s), want 60, proven", res.Makespan(), res.Bounds.Makespan, res.Proven(), res.Source)
	}
	if r := schedule.Measure(res.Schedule).BubbleRate; r > 0.2+1e-9 {
		t.Errorf("bubble rate %.4f, want 20%%", r)
	}
}

// With UseTime the search keeps improving until its context ends, and
// then answers within a second with a verified schedule (Ctrl-C and
// --time-limit).
func TestSearchUseTimeAnswersWithinASecond(t *testing.T) {
	testskip.Short(t, "a few seconds of search")
	p, err := placement.Builtin("nn-shape", placement.Options{Devices: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []time.Duration{500 * time.Millisecond, 3 * time.Second} {
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var stopped time.Time
		var timer *time.Timer
		// The clock starts at the first schedule the search reports: on
		// a loaded machine the constructions alone may take longer than
		// after, and a search stopped before any schedule answers with
		// an error, not a schedule (TestStopCauseNamesTheLimit's case).
		progress := func(pr Progress) {
			mu.Lock()
			defer mu.Unlock()
			if timer == nil && pr.BestMakespan > 0 {
				timer = time.AfterFunc(after, func() {
					mu.Lock()
					stopped = time.Now()
					mu.Unlock()
					cancel()
				})
			}
		}
		res, err := Run(ctx, spec.Spec{Placement: p, MicroBatches: 16, Memory: 8}, Options{UseTime: true, Progress: progress})
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		at := stopped
		mu.Unlock()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if at.IsZero() {
			t.Fatalf("stopped by itself before %v", after)
		}
		if wait := time.Since(at); wait > time.Second {
			t.Errorf("cancelled after %v: answered %v later", after, wait)
		}
		if err := verify.Schedule(res.Schedule); err != nil {
			t.Fatal(err)
		}
	}
}
