package refine

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// LNSOptions configure LNS.
type LNSOptions struct {
	// Sizes are the numbers of instances a window frees, tried in turn:
	// when a whole sweep over the schedule at one size wins nothing, the
	// next, larger size is tried. nil means DefaultSizes().
	Sizes []int
	// Effort caps every solver call (smt.Options.Effort); 0 means
	// DefaultEffort.
	Effort int
	// Steps is the number of windows given to the solver: the
	// deterministic budget of a search without a deadline. 0 means
	// DefaultSteps; a negative value means no budget: the sweeps go on,
	// each round with the next solver seed, until ctx ends, the makespan
	// meets the lower bound, or (with one seed) nothing is left to win.
	Steps int
	Seed  int
	// Resume starts the first sweep this many instances before the end
	// of the schedule instead of at the end: a search that calls LNS
	// again (a new round) passes the last call's Stats.Next, so that the
	// sweeps go on over the whole schedule.
	Resume int
	// Progress, when set, is called with the makespan after every step
	// that shortens it.
	Progress func(makespan int)
	// Decisions, when set, frees the decisions of every window's
	// instances too (keep, offload or recompute, as the placement allows):
	// each window is solved by encode.WindowDecisions, with host channels and
	// memory counted exactly. Without it a schedule that offloads or
	// recomputes is returned as it is.
	Decisions spec.Decisions
	// Links lets the windows run on a placement whose links carry one
	// transfer at a time (rule/links): the solver's window leaves the
	// queues out, and the compaction of its answer, which keeps them
	// (compact.Compact), decides whether the step is kept. Without it
	// such a schedule is returned as it is.
	Links bool
}

// DefaultSizes are the window sizes of LNS: about as many instances as the
// solver settles within DefaultEffort, then twice and four times as many
// (a new slice each call).
func DefaultSizes() []int { return []int{24, 48, 96} }

// DefaultSteps is the number of windows LNS gives the solver without a
// deadline.
const DefaultSteps = 12

// LNS shortens a schedule by large-neighbourhood search over windows
// anywhere in it, not only at its ends (Improve): a window frees the
// instances that start in a span of time [a, b), keeps every instance
// before a where it is, and keeps the instances from b on in the order
// each device runs them. The solver then minimises, over the freed
// instances, the latest end plus the time that must follow it: its
// tail, the longest path through the kept later instances (their device
// orders and their dependencies, transfers included) to the end of the
// schedule. That is the makespan the whole schedule gets when the later
// instances are moved as early as their orders allow (compact.Compact),
// which is what LNS does with every answer: a step is kept only when the
// compacted, verified schedule ends earlier.
//
// Windows sweep the schedule from its end to its start with a stride of
// half their size (rotating over the whole schedule), then grow
// (Sizes); without a step budget, each round after the first uses the
// next solver seed. Every schedule LNS returns has passed
// verify.Schedule and ends no later than s. Placements whose links carry
// one transfer at a time (rule/links) are returned as they are, unless
// opt.Links.
func LNS(ctx context.Context, s *schedule.Schedule, opt LNSOptions) (*schedule.Schedule, Stats, error) {
	var st Stats
	if err := verify.Schedule(s); err != nil {
		return nil, st, fmt.Errorf("refine: the schedule to improve is invalid: %w", err)
	}
	decide := opt.Decisions.Offload || opt.Decisions.Recompute
	if (links.Queued(s.Placement) && (!opt.Links || decide)) || len(s.Instances) < 2 || (len(s.Decisions) > 0 && !decide) || (decide && len(s.Pairs) > 0) {
		// Without Decisions, a schedule that offloads or recomputes is
		// left as it is: the windows' encoding keeps every activation;
		// the windows that decide pair nothing (placement's Overlap).
		return s, st, nil
	}
	sizes := opt.Sizes
	if sizes == nil {
		sizes = DefaultSizes()
	}
	if opt.Effort == 0 {
		opt.Effort = DefaultEffort
	}
	budget := opt.Steps
	if budget == 0 {
		budget = DefaultSteps
	}
	bounds := rules.LowerBounds(s.Spec)
	lb := bounds.Makespan
	cur := s
	seed := opt.Seed
	resume := opt.Resume
	if resume < 0 || resume >= len(s.Instances) {
		resume = 0
	}
	for round := 0; ; round++ {
		won := false
		for _, w := range sizes {
			w = min(w, len(s.Instances))
			// Sweep until a whole sweep at this size wins nothing.
			for {
				gain := false
				for pos := len(cur.Instances) - resume; pos > 0; pos -= max(1, w/2) {
					resume = 0
					st.Next = len(cur.Instances) - pos
					if ctx.Err() != nil || schedule.Makespan(cur) <= lb || (budget > 0 && st.Steps >= budget) {
						return cur, st, nil
					}
					var next *schedule.Schedule
					var checks int
					var err error
					if decide {
						next, checks, err = decidedWindow(ctx, cur, max(0, pos-w), pos, opt.Decisions, smt.Options{Seed: seed, Effort: opt.Effort})
					} else {
						next, checks, err = window(ctx, cur, max(0, pos-w), pos, smt.Options{Seed: seed, Effort: opt.Effort})
					}
					better, stop, err := st.take(ctx, &cur, next, checks, err, opt.Progress)
					if stop {
						if err != nil {
							return nil, st, err
						}
						return cur, st, nil
					}
					if better {
						gain, won = true, true
					}
					if pos-w <= 0 {
						break
					}
				}
				if !gain {
					break
				}
			}
			if w >= len(s.Instances) {
				break
			}
		}
		if budget > 0 && st.Steps >= budget {
			return cur, st, nil
		}
		if budget > 0 && !won {
			return cur, st, nil
		}
		// Without a budget, a round that won nothing is tried again with
		// another seed: the solver's search differs, and a capped call
		// may find what the last one missed.
		seed++
	}
}

// decidedWindow is window with the decisions of the freed instances free
// (encode.WindowDecisions): the instances at positions [from, to) of s in
// start order (widened so that both cuts are times) are freed, the ones
// before keep their starts and decisions, the later ones their devices'
// orders and their actions. It returns the compacted, verified schedule,
// or nil when it does not end earlier. Under a latency budget (s's
// Latency) the compaction is under the budget, and an answer whose orders
// meet none is nil too.
func decidedWindow(ctx context.Context, s *schedule.Schedule, from, to int, d spec.Decisions, so smt.Options) (*schedule.Schedule, int, error) {
	_, part, _, _, ok := windowCut(s, from, to)
	if !ok {
		return nil, 0, nil
	}
	got, checks, err := encode.WindowDecisions(ctx, s, part, d, so)
	if err != nil || got == nil {
		return nil, checks, err
	}
	if s.Latency > 0 {
		// The windows that decide do not hold the latency rule: the
		// answer is re-timed under the budget with its decisions
		// (compact.Compact with From), and left out where its orders meet
		// none.
		if verify.Schedule(got) == nil {
			sp := got.Spec
			sp.Latency = s.Latency
			c, err := compact.Compact(sp, compact.Keep{From: got})
			if err != nil {
				return nil, checks, nil
			}
			got = c
		}
	} else if c, err := compact.Compact(withoutLatency(got.Spec), compact.Keep{From: got}); err == nil && verify.Schedule(c) == nil && schedule.Makespan(c) <= schedule.Makespan(got) {
		got = c
	}
	if err := verify.Schedule(got); err != nil {
		return nil, checks, fmt.Errorf("refine: placement %q: improved schedule fails verification (a bug): %w", s.Placement.Name, err)
	}
	if schedule.Makespan(got) >= schedule.Makespan(s) {
		return nil, checks, nil
	}
	return got, checks, nil
}

// window frees the instances at positions [from, to) of s in start order
// (widened so that both cuts are times), solves for them with the later
// instances as tails, and returns the compacted, verified schedule, or
// nil when it does not end earlier.
func window(ctx context.Context, s *schedule.Schedule, from, to int, so smt.Options) (*schedule.Schedule, int, error) {
	p := s.Placement
	idx, part, from, to, ok := windowCut(s, from, to)
	if !ok {
		return nil, 0, nil
	}
	free := idx[from:to]
	pr, hint := encode.SpanWindow(s, part, free, idx[to:])
	sol, checks, err := solveWindow(ctx, p, pr, hint, so.Seed, so.Effort)
	if sol == nil {
		return nil, checks, err
	}
	orders := windowOrders(s, [][]int{idx[:from], free, idx[to:]}, free, sol.Starts)
	cs, err := compact.Compact(spec.Spec{Placement: p, MicroBatches: s.MicroBatches, Latency: s.Latency}, compact.Keep{Orders: orders})
	if err != nil {
		if s.Latency > 0 {
			return nil, sol.Checks, nil // its orders meet no schedule within the budget
		}
		return nil, sol.Checks, fmt.Errorf("refine: %w", err)
	}
	ins := cs.Instances
	out := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: s.MicroBatches, Memory: s.Memory, Latency: s.Latency}, Instances: ins}
	if err := verify.Schedule(out); err != nil {
		return nil, sol.Checks, fmt.Errorf("refine: placement %q: improved schedule fails verification (a bug): %w", p.Name, err)
	}
	if schedule.Makespan(out) >= schedule.Makespan(s) {
		return nil, sol.Checks, nil
	}
	return out, sol.Checks, nil
}

// windowOrders are the devices' orders after a window: the instances of
// each set in turn (before the window, the freed ones, the later ones),
// each set by start, the freed ones (free) at their new starts.
func windowOrders(s *schedule.Schedule, sets [][]int, free, starts []int) [][]schedule.Ref {
	// New device orders: the instances before the window, the freed
	// ones by their new starts, the later ones, each as they were.
	p := s.Placement
	at := make([]int, len(s.Instances))
	for x, in := range s.Instances {
		at[x] = in.Start
	}
	for k, x := range free {
		at[x] = starts[k]
	}
	orders := make([][]schedule.Ref, p.Devices)
	for _, set := range sets {
		set = slices.Clone(set)
		sort.SliceStable(set, func(a, b int) bool {
			x, y := set[a], set[b]
			if at[x] != at[y] {
				return at[x] < at[y]
			}
			return x < y
		})
		for _, x := range set {
			for _, d := range p.Blocks[s.Instances[x].Block].Devices {
				orders[d] = append(orders[d], s.Instances[x].Ref())
			}
		}
	}
	return orders
}

// windowCut orders s's instances by start (stably) and widens the window
// [from, to) of that order until both cuts fall between different start
// times. It returns the order, each instance's part (encode.Fixed before the
// window, encode.Free in it, encode.Later after it), the widened cut, and
// false when fewer than two instances are freed.
func windowCut(s *schedule.Schedule, from, to int) (idx, part []int, wFrom, wTo int, ok bool) {
	n := len(s.Instances)
	idx = make([]int, n)
	for x := range idx {
		idx[x] = x
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.Instances[idx[a]].Start < s.Instances[idx[b]].Start })
	start := func(k int) int { return s.Instances[idx[k]].Start }
	for from > 0 && start(from-1) == start(from) {
		from--
	}
	for to < n && start(to) == start(to-1) {
		to++
	}
	if to-from < 2 {
		return nil, nil, from, to, false
	}
	part = make([]int, n)
	for k, x := range idx {
		switch {
		case k < from:
			part[x] = encode.Fixed
		case k < to:
			part[x] = encode.Free
		default:
			part[x] = encode.Later
		}
	}
	return idx, part, from, to, true
}

// withoutLatency is sp without a latency budget.
func withoutLatency(sp spec.Spec) spec.Spec {
	sp.Latency = 0
	return sp
}
