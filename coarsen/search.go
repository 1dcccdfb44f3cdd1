package coarsen

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// HEFTAssignment is HEFT's choice of devices for sp's placement
// (heft.Run) as a start of the search over assignments
// (search.Options.Assignments), named "heft"; ok is false where HEFT finds
// no schedule (a memory budget it breaks).
func HEFTAssignment(sp spec.Spec) (a search.Assignment, ok bool) {
	r, err := heft.Run(sp.Placement, heft.Options{MicroBatches: sp.MicroBatches, Memory: sp.Memory})
	if err != nil {
		return search.Assignment{}, false
	}
	return search.Assignment{Name: "heft", Choice: r.Choice}, true
}

// withHEFTAssignment is given with HEFT's assignment of sp added after
// it, when HEFT schedules sp (a new slice: given is not changed).
func withHEFTAssignment(sp spec.Spec, given []search.Assignment) []search.Assignment {
	out := append([]search.Assignment(nil), given...)
	if a, ok := HEFTAssignment(sp); ok {
		out = append(out, a)
	}
	return out
}

// SearchResult is Search's answer.
type SearchResult struct {
	// Result is the search's on the placement it solved: p's own, or the
	// coarse placement's when Coarsened (its Schedule is then the coarse
	// one).
	*search.Result
	// Schedule is the verified schedule of p with its choice made: the
	// search's, or the expanded one when Coarsened.
	Schedule *schedule.Schedule
	// Coarsened is the coarsening's report, nil when p was searched as
	// it is.
	Coarsened *Report
	// Total is the time the whole took.
	Total time.Duration
}

// Search is the search over assignments (search.Run) of p, a placement
// whose blocks may choose their devices, with HEFT's assignment among its
// starts and HEFT's own schedule kept where it is shorter, so that it
// never returns worse than HEFT. With target > 0 and
// more blocks than target, p is first coarsened to target blocks (She et
// al. §IV, Algorithm 1), the coarse placement searched (HEFT's assignment
// of it among the starts; without refinement of its ends, unless
// opt.RefineEffort or opt.LNSSteps ask for it) and the answer expanded
// and re-timed on p
// (Plan), and HEFT's schedule of p itself kept instead where it is
// shorter (Report.ByHEFT); otherwise p is searched as it is. Either way
// the schedule is verified.
func Search(ctx context.Context, sp spec.Spec, target int, opt search.Options) (*SearchResult, error) {
	t0 := time.Now()
	p := sp.Placement
	r, s, rep, err := solveMaybeCoarse(ctx, p, target, func(ctx context.Context, q *placement.Placement, coarse bool) (*search.Result, *schedule.Schedule, error) {
		o := opt
		sq := sp
		sq.Placement = q
		o.Assignments = withHEFTAssignment(sq, opt.Assignments)
		// The coarse schedule is a plan of devices and orders, re-timed
		// on expansion: re-optimising its ends is not worth the time
		// unless asked for.
		if coarse && o.RefineEffort == 0 {
			o.RefineEffort = -1
		}
		if coarse && o.LNSSteps == 0 {
			o.LNSSteps = -1
		}
		r, err := search.Run(ctx, sq, o)
		if err != nil {
			return nil, nil, err
		}
		// HEFT's own schedule, not only its assignment searched again:
		// the search's constructions on that assignment may end later.
		if !coarse {
			if h, err := heft.Run(p, heft.Options{MicroBatches: sp.MicroBatches, Memory: sp.Memory}); err == nil && schedule.Makespan(h.Schedule) < r.Makespan() {
				r.Contenders = append([]search.Contender{{Source: r.Source, Makespan: r.Makespan()}}, r.Contenders...)
				r.Schedule, r.Source = h.Schedule, search.Source{Kind: search.SourceStart, Name: "heft"}
			}
		}
		return r, r.Schedule, nil
	})
	if err != nil {
		return nil, err
	}
	if rep == nil {
		return &SearchResult{Result: r, Schedule: s, Total: time.Since(t0)}, nil
	}
	if err := schedule.Verify(s); err != nil {
		return nil, fmt.Errorf("coarsen: the expanded schedule: %w", err)
	}
	// HEFT's schedule of p itself is a start too: the answer is never
	// worse than it.
	if h, err := heft.Run(p, heft.Options{MicroBatches: sp.MicroBatches, Memory: sp.Memory}); err == nil {
		rep.HEFT = schedule.Makespan(h.Schedule)
		if rep.HEFT < rep.Makespan {
			s, rep.ByHEFT = h.Schedule, true
		}
	}
	return &SearchResult{Result: r, Schedule: s, Coarsened: rep, Total: time.Since(t0)}, nil
}

// solveMaybeCoarse is the frame of Search and Optimal: with target ≤ 0 or
// no more blocks in p than target it solves p as it is (coarse false) and
// returns solve's result, its schedule and a nil report; otherwise it
// coarsens p to target blocks, solves the coarse placement (coarse true)
// and expands the answer onto p (Plan), returning solve's result on the
// coarse placement, the expanded schedule and the coarsening's report.
func solveMaybeCoarse[R any](ctx context.Context, p *placement.Placement, target int, solve func(ctx context.Context, q *placement.Placement, coarse bool) (R, *schedule.Schedule, error)) (R, *schedule.Schedule, *Report, error) {
	var r R
	if target <= 0 || len(p.Blocks) <= target {
		r, s, err := solve(ctx, p, false)
		return r, s, nil, err
	}
	s, rep, err := Plan(ctx, p, Options{Target: target}, func(ctx context.Context, cp *placement.Placement) (*schedule.Schedule, error) {
		got, s, err := solve(ctx, cp, true)
		if err != nil {
			return nil, err
		}
		r = got
		return s, nil
	})
	if err != nil {
		return r, nil, nil, err
	}
	return r, s, &rep, nil
}

// AutoBlocks is the size above which tessel search coarsens a placement
// with candidates without being asked (to DefaultTarget): She et al.
// solve graphs "typically fewer than 100 nodes".
const AutoBlocks = 100

// Target is the coarse block count flag says for p: flag itself when ≥ 0
// (0: never coarsen), and for -1 (the default) DefaultTarget where p has
// candidates and more than AutoBlocks blocks, else 0.
func Target(p *placement.Placement, flag int) int {
	if flag >= 0 {
		return flag
	}
	if p.HasCandidates() && len(p.Blocks) > AutoBlocks {
		return DefaultTarget
	}
	return 0
}

// CheckedTarget is Target for p and the value of --coarsen, flag, after
// checking it: a block count, 0 (never) or -1 (automatic), and a count
// only for a placement whose blocks give candidates.
func CheckedTarget(p *placement.Placement, flag int) (int, error) {
	if flag < -1 {
		return 0, fmt.Errorf("--coarsen must be a block count, 0 (never) or -1 (automatic), got %d", flag)
	}
	if flag > 0 && !p.HasCandidates() {
		return 0, fmt.Errorf("--coarsen: placement %q pins every block to its devices; coarsening is for placements whose blocks give candidates", p.Name)
	}
	return Target(p, flag), nil
}

// OptimalResult is Optimal's answer.
type OptimalResult struct {
	// Result is the time-optimal search's on the placement it solved:
	// p's own, or the coarse placement's when Coarsened.
	*search.OptimalResult
	// Schedule is the verified schedule of p with its choice made.
	Schedule  *schedule.Schedule
	Coarsened *Report
	Total     time.Duration
}

// Optimal is Search with the time-optimal search over assignments
// (search.Optimal) instead of search.Run: exact on the placement it
// solves, which must have few enough assignments
// (search.DefaultOptimalAssignments): coarsen to a target that keeps it
// so (2 devices: 12 blocks).
func Optimal(ctx context.Context, sp spec.Spec, target int, opt search.OptimalOptions) (*OptimalResult, error) {
	t0 := time.Now()
	p := sp.Placement
	r, s, rep, err := solveMaybeCoarse(ctx, p, target, func(ctx context.Context, q *placement.Placement, _ bool) (*search.OptimalResult, *schedule.Schedule, error) {
		o := opt
		sq := sp
		sq.Placement = q
		o.Assignments = withHEFTAssignment(sq, opt.Assignments)
		r, err := search.Optimal(ctx, sq, o)
		if err != nil {
			return nil, nil, err
		}
		return r, r.Schedule, nil
	})
	if err != nil {
		return nil, err
	}
	return &OptimalResult{OptimalResult: r, Schedule: s, Coarsened: rep, Total: time.Since(t0)}, nil
}
