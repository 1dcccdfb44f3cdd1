package completion

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"tessel/placement"
	"tessel/repetend"
	"tessel/schedule"
	"tessel/smt"
)

// Options configure Search.
type Options struct {
	Memory       int // per-device budget; 0 means unlimited
	MaxNR        int // largest N_R tried; 0: from the budget
	MicroBatches int // N of the full schedule
	Method       repetend.Method
	Jobs         int
	Seed         int
	Effort       int // repetend.Options.Effort
	// PhaseEffort caps each solver call of the warmup and cooldown
	// searches (smt.Options.Effort); 0 means DefaultPhaseEffort, and a
	// negative value means no cap. A capped phase keeps the best schedule
	// found and is reported as not proven; the cap is deterministic.
	PhaseEffort int
	Progress    func(repetend.Progress)
}

// DefaultPhaseEffort lets a warmup or cooldown proof run for about a
// second per solver call on this project's reference machine: enough to
// prove most phases optimal, and bounded where a proof is out of reach
// (nn-shape's warmup, whose makespan it still improves from the greedy
// 36 to 27 against a lower bound of 24).
const DefaultPhaseEffort = 1_000_000

// Times split the search time as the paper's Fig. 10 does.
type Times struct {
	Total, Repetend, Warmup, Cooldown time.Duration
}

// Result is a verified schedule and how it was found.
type Result struct {
	Schedule *schedule.Schedule // verified
	Repetend *repetend.Repetend // nil when Fallback
	Search   *repetend.Result
	Times    Times
	// WarmupProven and CooldownProven say whether the phases' schedules
	// are proven time-optimal.
	WarmupProven, CooldownProven bool
	// Fallback is set when N < N_R: the schedule is then the time-optimal
	// search of all N micro-batches (TO holds its outcome).
	Fallback bool
	TO       *smt.Solution
}

// Proven reports whether every part of the search ran to its end: the
// repetend's period is least and warmup and cooldown are time-optimal.
func (r *Result) Proven() bool {
	if r.Fallback {
		return r.TO != nil && r.TO.Proven
	}
	return r.Search != nil && r.Search.Proven && r.WarmupProven && r.CooldownProven
}

// ErrNoRepetend means no repetend fits the memory budget.
var ErrNoRepetend = errors.New("no repetend fits the memory budget")

// graceTime is how long the phases may still run after the caller's
// context ended, to turn the best repetend found into a schedule.
const graceTime = 10 * time.Second

// Search is the Tessel search (Algorithm 1 with lazy completion): the
// repetend of least period whose warmup and cooldown exist, the
// time-optimal warmup and cooldown of that one, and the full schedule of
// MicroBatches micro-batches, verified.
func Search(ctx context.Context, p *placement.Placement, opt Options) (*Result, error) {
	t0 := time.Now()
	if opt.MicroBatches < 1 {
		return nil, fmt.Errorf("completion: %d micro-batches, want at least 1", opt.MicroBatches)
	}
	var mu sync.Mutex
	cache := map[string]bool{}
	accept := func(ctx context.Context, nr int, offsets []int) (bool, error) {
		key := fmt.Sprint(nr, offsets)
		mu.Lock()
		ok, seen := cache[key]
		mu.Unlock()
		if seen {
			return ok, nil
		}
		ok, err := Feasible(ctx, p, nr, offsets, opt.Memory, opt.MicroBatches)
		if err != nil {
			return false, err
		}
		mu.Lock()
		cache[key] = ok
		mu.Unlock()
		return ok, nil
	}
	sr, err := repetend.Search(ctx, p, repetend.Options{
		Memory: opt.Memory, MaxNR: opt.MaxNR, MicroBatches: opt.MicroBatches, Method: opt.Method, Jobs: opt.Jobs, Seed: opt.Seed, Effort: opt.Effort,
		Accept: accept, Progress: opt.Progress,
	})
	res := &Result{Search: sr}
	res.Times.Repetend = time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("placement %q: repetend search: %w", p.Name, err)
	}
	if sr.Best == nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("placement %q: stopped before any repetend was found: %w", p.Name, ctx.Err())
		}
		return nil, fmt.Errorf("placement %q: memory %d, N_R ≤ %d: %w", p.Name, opt.Memory, sr.MaxNR, ErrNoRepetend)
	}
	r := sr.Best
	res.Repetend = r
	phaseCtx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		phaseCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), graceTime)
		defer cancel()
	}
	effort := opt.PhaseEffort
	switch {
	case effort == 0:
		effort = DefaultPhaseEffort
	case effort < 0:
		effort = 0
	}
	n := opt.MicroBatches
	if n < r.NR {
		t1 := time.Now()
		s, sol, err := smt.Optimal(phaseCtx, p, n, opt.Memory, smt.Options{Seed: opt.Seed})
		res.Times.Warmup = time.Since(t1)
		if err != nil {
			return nil, err
		}
		if err := schedule.Verify(s); err != nil {
			return nil, fmt.Errorf("time-optimal schedule fails verification: %w", err)
		}
		res.Schedule, res.Fallback, res.TO = s, true, sol
		res.Times.Total = time.Since(t0)
		return res, nil
	}
	warm := Warmup(p, r.Offsets)
	cool := Cooldown(p, r.Offsets, r.NR, n)
	t1 := time.Now()
	ws, err := smt.MinimizeMakespan(phaseCtx, smt.InstanceProblem(p, warm, opt.Memory, nil), smt.Options{Seed: opt.Seed, Effort: effort})
	res.Times.Warmup = time.Since(t1)
	if err != nil {
		return nil, fmt.Errorf("placement %q: warmup: %w", p.Name, err)
	}
	t2 := time.Now()
	cs, err := smt.MinimizeMakespan(phaseCtx, smt.InstanceProblem(p, cool, opt.Memory, cooldownEntry(p, r.Offsets, r.NR, n)), smt.Options{Seed: opt.Seed, Effort: effort})
	res.Times.Cooldown = time.Since(t2)
	if err != nil {
		return nil, fmt.Errorf("placement %q: cooldown: %w", p.Name, err)
	}
	res.WarmupProven, res.CooldownProven = ws.Proven, cs.Proven
	s, err := Assemble(p, r, warm, cool, ws.Starts, cs.Starts, n, opt.Memory)
	if err != nil {
		return nil, err
	}
	res.Schedule = s
	res.Times.Total = time.Since(t0)
	return res, nil
}
