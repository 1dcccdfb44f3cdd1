package search

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/rule/memory"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// # A window of micro-batches, extended periodically
//
// The Tessel paper searches the repetend once and repeats it, so its
// search costs the same whatever N (Lin et al., "Tessel: Boosting
// Distributed Execution of Large DNN Models via Flexible Schedule
// Search"). Run does the same for every start: beyond WindowMicroBatches
// it searches a window of that many micro-batches — warmup, iterations,
// cooldown — and extends each schedule the window's search offered by its
// steady state to N (schedule.Extensible); the least extended makespan
// wins and is verified at N. Where nothing extends (no steady state, or
// copies that break a rule), the search runs on all N as before.

// WindowMicroBatches is the least window Run searches and extends to N
// where N is more than twice as many: enough for the constructions'
// warmup, iterations of a steady state and a cooldown on the placements
// tessel builds, and half the N up to which Run searches all N (so that
// the search of any N costs at most about what that of 2·WindowMicroBatches
// does).
const WindowMicroBatches = 64

// windowStep: the window is WindowMicroBatches plus (N −
// WindowMicroBatches) mod windowStep, so that the micro-batches added to
// it are a multiple of every count of micro-batches per period that
// divides windowStep (1, 2, 3, 4, 6, 8, 12, 24): a steady state of that
// many per window extends by whole windows.
const windowStep = 24

// windowSize is the window searched for n micro-batches.
func windowSize(n int) int {
	return WindowMicroBatches + (n-WindowMicroBatches)%windowStep
}

// windowed reports whether Run searches a window and extends it: more
// micro-batches than the window, no rule but those an extension carries
// (the memory budget, sharded stages: not decisions, overlapped pairs,
// link orders or a latency budget), nothing that the time given decides
// (UseTime), no given starts (schedules of all N) and not the solver
// alone.
func windowed(sp spec.Spec, opt Options) bool {
	return sp.MicroBatches > 2*WindowMicroBatches && rules.Unhandled(sp, memory.Rule{}, fsdp.Rule{}) == nil && len(opt.Start) == 0 &&
		!opt.UseTime && !opt.SolverOnly
}

// timedWindow reports whether a search given the time (UseTime) is one
// Run would otherwise search on a window: it then searches the window
// first (startFromWindow).
func timedWindow(sp spec.Spec, opt Options) bool {
	o := opt
	o.UseTime = false
	return opt.UseTime && windowed(sp, o)
}

// startFromWindow is a search given the time (UseTime) beyond the
// window. The constructions alone on all N outlast a short limit at large
// N (N = 100,000 on the v-shape took more than 2 s), and a limit that ends
// there must still answer. So the window is searched first:
//
//   - where all N has at most timedWholeInstances instances, at the
//     default effort; its best schedule, extended to N, becomes the
//     incumbent, replaced only by one that ends no later, and a start of
//     the search of all N, which uses the time and never returns worse
//     (ok false: Run goes on with the returned options);
//   - beyond, with the time: the window's search improves until the time
//     left is what extending and verifying an answer of N needs
//     (extendTime, at most half the time left), and its best schedule
//     extended is the answer.
//
// Where the window gives nothing, Run searches all N as without a limit.
func startFromWindow(ctx context.Context, sp spec.Spec, opt Options, inc *incumbent, t0 time.Time) (Options, *Result, bool, error) {
	if sp.MicroBatches*len(sp.Placement.Blocks) > timedWholeInstances {
		left := time.Until(deadlineOf(ctx))
		phases, cancel := context.WithTimeout(ctx, left-min(extendTime(sp), left/2))
		defer cancel()
		res, ok, err := runWindowWithin(ctx, phases, sp, opt, inc, t0)
		return opt, res, ok, err
	}
	wopt := opt
	wopt.UseTime = false
	res, ok, err := runWindow(ctx, sp, wopt, inc, t0)
	if err != nil || !ok {
		return opt, nil, false, nil
	}
	inc.keepUnlessBeaten()
	opt.Start = append(slices.Clone(opt.Start), Start{
		Name:     fmt.Sprintf("%s (a window of %d, extended)", res.Source, res.Window),
		Schedule: res.Schedule,
	})
	return opt, nil, false, nil
}

// timedWholeInstances is the most instances of all N for which a search
// given the time goes on to search all N after its window
// (startFromWindow).
const timedWholeInstances = schedule.SteadyLimit

// extendTime is the time to extend a window's schedule to sp's N and
// verify it: about 1.6 µs per instance measured on the v-shape at
// N = 100,000 (quiet machine), with room for a loaded one.
func extendTime(sp spec.Spec) time.Duration {
	return time.Duration(max(sp.MicroBatches, 0)*len(sp.Placement.Blocks)) * 2 * time.Microsecond
}

// deadlineOf is ctx's deadline, or a time far ahead where it has none.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(24 * time.Hour)
}

// candidate is a schedule of the window with its extension to N.
type candidate struct {
	seed
	x        *schedule.Extension
	makespan int // the extension's
}

// runWindow searches windowSize(N) micro-batches and extends the
// best of the window's schedules at N; ok is false where none extends
// (Run then searches all N).
func runWindow(ctx context.Context, sp spec.Spec, opt Options, inc *incumbent, t0 time.Time) (*Result, bool, error) {
	return runWindowWithin(ctx, ctx, sp, opt, inc, t0)
}

// runWindowWithin is runWindow whose window search stops when phases
// ends; the extension to N stops only when ctx does.
func runWindowWithin(ctx, phases context.Context, sp spec.Spec, opt Options, inc *incumbent, t0 time.Time) (*Result, bool, error) {
	n := sp.MicroBatches
	w := windowSize(n)
	st := newState(sp.WithMicroBatches(w), opt, nil, t0)
	st.collect = true
	if err := st.runPhases(phases); err != nil {
		return nil, false, err
	}
	res := st.res
	best, s, extended, err := extendBest(ctx, res, st.offered, n)
	if err != nil {
		return nil, false, fmt.Errorf("placement %q: stopped before any schedule of %d micro-batches was built (while extending the window's of %d): %w",
			sp.Placement.Name, n, w, stopCause(ctx, opt))
	}
	if best == nil {
		return nil, false, nil
	}
	out := *res
	out.Schedule, out.Source = s, best.src
	out.Steady = best.x.Steady()
	out.Window = w
	out.Bounds = rules.LowerBounds(sp)
	out.BoundBy = out.Bounds.By
	out.Contenders = extendedContenders(res.Contenders, st.offered, extended)
	out.Times.Total = time.Since(t0)
	out.Stopped = stopReason(phases, opt, out.Times.Total)
	inc.publish(&out, t0)
	return &out, true, nil
}

// extendBest is the window's schedule (res's answer first, then those
// offered, in order) of least makespan once extended to n, built and
// verified, with the extended makespans it found (of those that
// extend). A schedule's extension adds at least the placement's largest
// device load per micro-batch, so the schedules whose window makespan
// plus that cannot beat the best two found are not extended (the answer
// and its runner-up are the same as if every one were). Building and
// verifying an extension checks ctx: err is ctx's where it stopped them.
func extendBest(ctx context.Context, res *Result, offered []seed, n int) (*candidate, *schedule.Schedule, map[*schedule.Schedule]int, error) {
	k := n - res.Schedule.MicroBatches
	perMicro := res.Schedule.Placement.MaxLoad()
	seen := map[*schedule.Schedule]bool{}
	var order []seed
	for _, c := range append([]seed{{res.Source, res.Schedule}}, offered...) {
		if c.s != nil && !seen[c.s] {
			seen[c.s] = true
			order = append(order, c)
		}
	}
	slices.SortStableFunc(order, func(a, b seed) int { return cmp.Compare(schedule.Makespan(a.s), schedule.Makespan(b.s)) })
	extended := map[*schedule.Schedule]int{}
	var cands []candidate
	first, second := math.MaxInt, math.MaxInt
	for j, c := range order {
		if j > 0 && schedule.Makespan(c.s)+k*perMicro >= second {
			break // order is by window makespan: none after can beat the best two
		}
		x, ok := schedule.Extensible(c.s, n)
		if !ok {
			continue
		}
		ms := x.Makespan()
		cands = append(cands, candidate{seed: c, x: x, makespan: ms})
		extended[c.s] = ms
		if ms < first {
			first, second = ms, first
		} else if ms < second {
			second = ms
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(a.makespan, b.makespan) })
	for i := range cands {
		s, err := cands[i].x.Schedule(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		if verify.Schedule(s) == nil {
			return &cands[i], s, extended, nil
		}
		if ctx.Err() != nil {
			return nil, nil, nil, ctx.Err()
		}
	}
	return nil, nil, nil, nil
}

// extendedContenders are the window's contenders at N: each whose
// schedule extends, with its extension's makespan (extended); the others
// are left out (their makespan at N is not known).
func extendedContenders(cs []Contender, offered []seed, extended map[*schedule.Schedule]int) []Contender {
	var out []Contender
	used := make([]bool, len(offered))
	for _, c := range cs {
		for j, o := range offered {
			if used[j] || o.src != c.Source || schedule.Makespan(o.s) != c.Makespan {
				continue
			}
			used[j] = true
			if ms, ok := extended[o.s]; ok {
				out = append(out, Contender{Source: c.Source, Makespan: ms})
			}
			break
		}
	}
	return out
}
