package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// The solver's errors leave the search as its own: a budget no schedule
// fits is ErrInfeasible, a search out of time before any schedule
// ErrStopped; neither is the other.
func TestErrorsAreTheSearchs(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	// The first forward holds 3 until its backward frees it: over a
	// budget of 2 whatever the order.
	p.Blocks[0].Memory = 3
	for i, b := range p.Blocks {
		if b.Kind == placement.Backward && b.Devices[0] == 0 {
			p.Blocks[i].Memory = -3
		}
	}
	_, err := Optimal(context.Background(), spec.Spec{Placement: p, MicroBatches: 2, Memory: 2}, OptimalOptions{})
	if !errors.Is(err, ErrInfeasible) || errors.Is(err, ErrStopped) {
		t.Fatalf("budget 2 under a block of 3: %v, want ErrInfeasible", err)
	}

	for _, c := range []struct {
		err                 error
		infeasible, stopped bool
	}{
		{fmt.Errorf("phase: %w", z3.ErrInterrupted), false, true},
		{fmt.Errorf("phase: %w", context.DeadlineExceeded), false, true},
		{fmt.Errorf("phase: %w", smt.ErrInfeasible), true, false},
		{fmt.Errorf("phase: %w", z3.ErrEffort), false, false},
	} {
		got := own(c.err)
		if errors.Is(got, ErrInfeasible) != c.infeasible || errors.Is(got, ErrStopped) != c.stopped || got.Error() != c.err.Error() {
			t.Errorf("own(%v): infeasible %v, stopped %v, message %q", c.err, errors.Is(got, ErrInfeasible), errors.Is(got, ErrStopped), got.Error())
		}
	}
	if own(nil) != nil {
		t.Error("own(nil) is not nil")
	}
}

// A search stopped at its time limit before any schedule says which limit
// ran out, and is ErrStopped.
func TestStopCauseNamesTheLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	err := stopCause(ctx, Options{TimeLimit: 2 * time.Second})
	if !errors.Is(err, ErrStopped) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the time limit of 2s ran out") {
		t.Errorf("at the time limit: %v", err)
	}
	ictx, interrupt := context.WithCancelCause(context.Background())
	interrupt(errors.New("interrupt signal received"))
	if err := stopCause(ictx, Options{TimeLimit: 2 * time.Second}); !errors.Is(err, ErrStopped) || err.Error() != "interrupt signal received" {
		t.Errorf("interrupted: %v", err)
	}
}
