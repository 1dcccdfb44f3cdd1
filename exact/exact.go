// Package exact runs the schedule search on a coarse copy of a placement
// whose steps are fine — a placement made from a model in real units,
// where every block and transfer is timed within half a percent of its
// time (partition.PlacementOptions' Step) — and times the search's answer
// again at the placement's own steps: the time unit may coarsen the
// search, it never coarsens the answer.
//
// The coarse copy keeps every block, dependency and memory and divides
// every time by the placement's search step (its Units' Search), so the
// solver sees small integers. Its schedule's orders (every device's order
// of instances, every offload, reload and recompute, every overlapped
// pair) are kept and timed on the placement itself (compact.Retime): the
// returned schedule is the placement's, verified there, and every figure
// a report prints of it is at the model's own times. A placement without
// a search step (every built-in) is searched as it is, and Run is
// search.Run.
package exact

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/construct"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Result is a search on a placement's coarse copy and its answer at the
// placement's own times.
type Result struct {
	// Search is the search on the coarse copy: its repetend, bounds,
	// candidates and proofs are about that copy, in its steps (Step of
	// the placement's each). Where the placement has no search step, it
	// is the search of the placement itself.
	Search *search.Result
	// Schedule is the answer: Search's schedule timed on the placement
	// (compact.Retime, or a list schedule in the same order where that
	// cannot keep the orders: Listed), verified there. It is
	// Search.Schedule where the placement has no search step.
	Schedule *schedule.Schedule
	// Step is the placement's steps per step of the copy (1: none).
	Step int
	// Listed says the answer is a list schedule in the order of the
	// search's starts (construct.List) rather than the search's orders
	// kept: the orders did not carry over (a schedule that offloads on
	// links that carry one transfer at a time).
	Listed bool
}

// Coarse says whether the search ran on a coarse copy.
func (r *Result) Coarse() bool { return r.Step > 1 }

// Run is search.Run of sp on its placement's coarse copy
// (placement.Coarsen by the placement's search step) with its answer
// timed on the placement. The budget, N and decisions of sp are the
// copy's as they are (memory is not coarsened); a latency budget, in the
// placement's steps, is the copy's rounded down and then checked on the
// placement; the given starts, schedules of the placement, are timed on
// the copy first (their orders kept). The answer's spec is sp (its
// cluster recorded where sp has one). Without a search step it is
// search.Run(ctx, sp, opt).
func Run(ctx context.Context, sp spec.Spec, opt search.Options) (*Result, error) {
	start := opt.Start
	return onCopy(sp, start, func(q spec.Spec, start []search.Start) (*search.Result, error) {
		o := opt
		o.Start = start
		return search.Run(ctx, q, o)
	})
}

// Retime is s, a schedule of p's coarse copy, on p: its orders kept
// (compact.Retime), or where they cannot be kept, a list schedule of p
// that starts the instances in the order of s's starts (construct.List),
// each only where it fits the budget. The result is verified.
func Retime(s *schedule.Schedule, p *placement.Placement) (*schedule.Schedule, error) {
	out, err := compact.Retime(s, p)
	if err == nil {
		out.Memory = s.Memory
		return out, nil
	}
	prio := make([]int, s.MicroBatches*len(p.Blocks))
	for rank, in := range schedule.StartOrder(s) {
		prio[in.Micro*len(p.Blocks)+in.Block] = rank
	}
	// Where the search offloaded or recomputed, the list schedule may
	// too (the coarse copy's decisions need not fit the exact times: an
	// offload and a reload ordered on a host channel at the coarse times
	// can leave a reload no time before its consumer).
	off, rec := s.Count()
	var lerr error
	for _, sv := range []construct.Savings{{Offload: off > 0, Recompute: rec > 0, Balance: off > 0 && rec > 0}, {Offload: off > 0, Recompute: rec > 0, PreferRecompute: true}} {
		ls, e := construct.List(p, s.MicroBatches, construct.ListOptions{Memory: s.Memory, Priority: prio, Savings: sv})
		if e == nil {
			if e = verify.Schedule(ls); e == nil {
				return ls, nil
			}
		}
		lerr = e
		if off+rec == 0 {
			break
		}
	}
	return nil, fmt.Errorf("the search's schedule at the placement's own times: %w (a list schedule in its order: %v)", err, lerr)
}

// sameOrders says whether two schedules of the same blocks run every
// device's instances in the same order.
func sameOrders(a, b *schedule.Schedule) bool {
	oa, ob := schedule.Orders(a), schedule.Orders(b)
	for d := range oa {
		if len(oa[d]) != len(ob[d]) {
			return false
		}
		for i := range oa[d] {
			if oa[d][i] != ob[d][i] {
				return false
			}
		}
	}
	return true
}

// ReplanStarts is search.ReplanStarts (the replan's search from given
// starts) on sp's coarse copy, its answer timed on sp's placement, as Run.
func ReplanStarts(ctx context.Context, sp spec.Spec, start []search.Start, opt search.ReplanOptions) (*Result, error) {
	return onCopy(sp, start, func(q spec.Spec, start []search.Start) (*search.Result, error) {
		return search.ReplanStarts(ctx, q, start, opt)
	})
}

// Fresh is choose.Fresh (a fresh search with the old schedule's budget
// and micro-batches, the devices chosen as tessel search does) on p's
// coarse copy, its answer timed on p.
func Fresh(ctx context.Context, p *placement.Placement, old *schedule.Schedule, opt search.ReplanOptions, limit time.Duration) (*Result, error) {
	sp := spec.Spec{Placement: p, MicroBatches: old.MicroBatches, Memory: old.Memory}
	return onCopy(sp, nil, func(q spec.Spec, _ []search.Start) (*search.Result, error) {
		return choose.Fresh(ctx, q.Placement, old, opt, limit)
	})
}

// onCopy runs a search of sp's coarse copy (the given starts, schedules
// of sp's placement, timed on the copy first) and times its answer on
// sp's placement; without a search step it runs on sp itself.
func onCopy(sp spec.Spec, start []search.Start, run func(spec.Spec, []search.Start) (*search.Result, error)) (*Result, error) {
	p := sp.Placement
	k := p.Units.SearchStep()
	if k <= 1 {
		res, err := run(sp, start)
		if err != nil {
			return nil, err
		}
		return &Result{Search: res, Schedule: res.Schedule, Step: 1}, nil
	}
	q, err := placement.Coarsen(p, k)
	if err != nil {
		return nil, err
	}
	cs := spec.Spec{Placement: q, MicroBatches: sp.MicroBatches, Memory: sp.Memory, Allowed: sp.Allowed}
	if sp.Latency > 0 {
		cs.Latency = max(1, sp.Latency/k)
	}
	var onQ []search.Start
	for _, st := range start {
		if s, err := compact.Retime(st.Schedule, q); err == nil {
			st.Schedule, st.Repetend = s, nil
			onQ = append(onQ, st)
		}
	}
	res, err := run(cs, onQ)
	if err != nil {
		return nil, err
	}
	out := &Result{Search: res, Step: k}
	if out.Schedule, err = Retime(res.Schedule, p); err != nil {
		return nil, err
	}
	out.Listed = !sameOrders(out.Schedule, res.Schedule)
	// The answer is sp's: its cluster, given placement, latency budget
	// and decisions, checked again.
	out.Schedule.Spec = sp
	if err := verify.Schedule(out.Schedule); err != nil {
		if sp.Latency > 0 {
			return nil, fmt.Errorf("the schedule at the placement's own times breaks the latency budget %d (the search's copy met %d of its steps): %w", sp.Latency, cs.Latency, err)
		}
		return nil, fmt.Errorf("the search's schedule at the placement's own times fails verification (a bug): %w", err)
	}
	return out, nil
}
