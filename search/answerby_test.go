package search

import (
	"context"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// answerBy moves a deadline earlier by the time to finish an answer of
// the spec's size, at most a tenth of the time left, and leaves a
// context without one, or a small answer's, as it is.
func TestAnswerBy(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4}) // 8 blocks
	for _, tc := range []struct {
		name    string
		n       int
		left    time.Duration
		reserve time.Duration
	}{
		{"small", 10, 10 * time.Second, 0},
		{"large", 4000, 10 * time.Second, StopGrace + 32000*finishPerInstance},
		{"a tenth at most", 4000, 500 * time.Millisecond, 50 * time.Millisecond},
	} {
		deadline := time.Now().Add(tc.left)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		got, stop := answerBy(ctx, spec.Spec{Placement: p, MicroBatches: tc.n})
		d, ok := got.Deadline()
		if !ok {
			t.Fatalf("%s: no deadline", tc.name)
		}
		// The tenth is of the time left when answerBy ran: a little less.
		if r := deadline.Sub(d); r > tc.reserve || r < tc.reserve-10*time.Millisecond && tc.reserve > 0 {
			t.Errorf("%s: answers %v before the deadline, want %v", tc.name, r, tc.reserve)
		}
		stop()
		cancel()
	}
	ctx, stop := answerBy(context.Background(), spec.Spec{Placement: p, MicroBatches: 10})
	defer stop()
	if _, ok := ctx.Deadline(); ok {
		t.Error("a context without a deadline got one")
	}
}
