package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// StopGrace is how long Run waits, once ctx has ended, for the step in
// flight to return; after it, Run answers with the best result so far and
// leaves the step to finish in the background. Every step checks ctx
// where its work grows with the input, so the grace is rarely used up;
// it bounds the answer's delay where a single step (a sort, a check of a
// very large schedule) cannot be cut.
const StopGrace = 100 * time.Millisecond

// finishPerInstance is the time a caller takes, per block instance, to
// do what follows a search's answer: verify it again, measure and report
// it, write it (a command's whole finish measured about 1 s for the 160,000
// instances and 50,000 decisions of 10,000 micro-batches on eight
// devices, on a loaded machine).
const finishPerInstance = 6 * time.Microsecond

// answerBy is ctx with its deadline, where it has one and the answer is
// large, moved earlier by the time to finish an answer of sp's size
// (finishPerInstance for each of its instances, and StopGrace, at most a
// tenth of the time left): so that a command's time limit holds for the
// command, its answer verified and written, not only for the search. An
// answer that takes less than StopGrace to finish uses all the time.
func answerBy(ctx context.Context, sp spec.Spec) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok || sp.Placement == nil {
		return ctx, func() {}
	}
	finish := time.Duration(max(sp.MicroBatches, 0)*len(sp.Placement.Blocks)) * finishPerInstance
	if finish < StopGrace {
		return ctx, func() {}
	}
	reserve := min(finish+StopGrace, time.Until(deadline)/10)
	return context.WithDeadline(ctx, deadline.Add(-reserve))
}

// incumbent holds the best result a search has published, for watch. Its
// methods are safe on a nil *incumbent (a search nobody watches).
type incumbent struct {
	mu   sync.Mutex
	best *Result
	t0   time.Time
	// early says best is publishEarly's baseline: replaced only by a
	// schedule that ends no later.
	early bool
}

// publishEarly records res (not copied: the caller keeps no reference)
// as an early answer (state.publishEarly).
func (inc *incumbent) publishEarly(res *Result, t0 time.Time) {
	if inc == nil || res == nil || res.Schedule == nil {
		return
	}
	inc.mu.Lock()
	defer inc.mu.Unlock()
	if inc.best == nil {
		inc.best, inc.t0, inc.early = res, t0, true
	}
}

// publish records a copy of res, when it has a schedule: every schedule
// it holds is verified and never changed afterwards, so the copy can
// outlive the search that goes on changing res.
func (inc *incumbent) publish(res *Result, t0 time.Time) {
	if inc == nil || res == nil || res.Schedule == nil {
		return
	}
	snap := *res
	snap.Contenders = slices.Clone(res.Contenders)
	inc.mu.Lock()
	defer inc.mu.Unlock()
	if inc.early && schedule.Makespan(snap.Schedule) > schedule.Makespan(inc.best.Schedule) {
		return
	}
	inc.best, inc.t0, inc.early = &snap, t0, false
}

// watch runs the search (run) and returns its answer, or, when ctx ends
// and the search has not returned within StopGrace, the best result it
// published, marked as stopped. A deadline of ctx is moved earlier by
// the time to finish the answer (answerBy). Progress reports end when watch returns.
func watch(ctx context.Context, sp spec.Spec, opt Options) (*Result, error) {
	var inc incumbent
	var gone atomic.Bool
	if progress := opt.Progress; progress != nil {
		var mu sync.Mutex
		opt.Progress = func(pr Progress) {
			mu.Lock()
			defer mu.Unlock()
			if !gone.Load() {
				progress(pr)
			}
		}
		defer func() {
			mu.Lock() // a report in flight ends before watch returns
			gone.Store(true)
			mu.Unlock()
		}()
	}
	type answer struct {
		res *Result
		err error
	}
	ctx, cancel := answerBy(ctx, sp)
	defer cancel()
	done := make(chan answer, 1)
	var pan safego.Panic
	t0 := time.Now()
	go func() {
		var a answer
		defer func() { done <- a }()
		defer pan.Recover()
		a.res, a.err = run(ctx, sp, opt, &inc)
	}()
	finished := func(a answer) (*Result, error) {
		pan.Repanic()
		return a.res, a.err
	}
	select {
	case a := <-done:
		return finished(a)
	case <-ctx.Done():
	}
	grace := time.NewTimer(StopGrace)
	defer grace.Stop()
	select {
	case a := <-done:
		return finished(a)
	case <-grace.C:
	}
	inc.mu.Lock()
	best := inc.best
	inc.mu.Unlock()
	if best == nil {
		return nil, fmt.Errorf("placement %q: stopped before any schedule was found: %w", sp.Placement.Name, stopCause(ctx, opt))
	}
	res := *best
	res.Times.Total = time.Since(t0)
	res.Stopped = stopReason(ctx, opt, res.Times.Total)
	return &res, nil
}

// stopReason is Result.Stopped for a search that took took and whose ctx
// is as it is now: "" when ctx has not ended.
func stopReason(ctx context.Context, opt Options, took time.Duration) string {
	err := ctx.Err()
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded) && opt.TimeLimit > 0:
		return fmt.Sprintf("at the time limit of %v: the answer depends on the time given (a longer limit may find a shorter schedule)", opt.TimeLimit)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("at the deadline, after %.1fs: the best verified schedule found by then", took.Seconds())
	}
	return fmt.Sprintf("interrupted after %.1fs: the best verified schedule found by then", took.Seconds())
}

// stopCause is why ctx ended, as a stopped search says it: the time
// limit by its length where it ran out, else ctx's cause (Ctrl-C).
func stopCause(ctx context.Context, opt Options) error {
	err := context.Cause(ctx)
	if errors.Is(err, context.DeadlineExceeded) && opt.TimeLimit > 0 {
		err = fmt.Errorf("the time limit of %v ran out (%w)", opt.TimeLimit, err)
	}
	return stopped{err}
}

// stopped is why a search stopped (ctx's cause): an error that is
// ErrStopped, whatever ended ctx (a deadline, Ctrl-C).
type stopped struct{ error }

func (e stopped) Unwrap() error        { return e.error }
func (e stopped) Is(target error) bool { return target == ErrStopped }
