// Package choose chooses devices: for a placement whose blocks give
// candidates (placement's "Where as a decision"; She et al., "Automatic
// Operator-level Parallelism Planning for Distributed Deep Learning – A
// Mixed-Integer Programming Approach"), it searches assignments of blocks
// to devices — built-in starts (the given choice, partition's split, all
// on one device, round robin), HEFT's, the solver's with assignment
// literals, every assignment where there are few — each as a pinned
// placement through package search, and coarsens a large graph first
// (package coarsen). It sits above the search: the search takes one
// placement with its devices chosen, and nothing re-enters it.
package choose

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/coarsen"
	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Options configure Run and Devices: the search's effort, and the choice
// of devices.
type Options struct {
	Search search.Options
	// Assignments are choices of devices to start from beside
	// AssignmentStarts; ignored without candidates. Run adds HEFT's.
	Assignments []Assignment
	// MaxAssignments is how many assignments are enumerated, each
	// searched, when a placement with candidates has no more: 0 means
	// DefaultAssignments, a negative value the starts alone.
	MaxAssignments int
	// Objective is what the choice of devices minimises: the makespan
	// (default) or the period (ObjectivePeriod).
	Objective Objective
	// Coarsen, for Run, is the block count to coarsen a larger placement
	// to first (Target; 0: searched as it is).
	Coarsen int
}

// OptimalOptions configure Optimal and OptimalDevices.
type OptimalOptions struct {
	Search search.OptimalOptions
	// Assignments and MaxAssignments are Options': starts beside
	// AssignmentStarts, and the most assignments searched (0:
	// DefaultOptimalAssignments; a placement with more is refused).
	Assignments    []Assignment
	MaxAssignments int
	// Coarsen is Options.Coarsen, for Optimal.
	Coarsen int
}

// Devices is search.Run for a placement whose blocks may give
// candidates: where they do, and no choice is made or no start given,
// every start searched as a pinned placement, then every other
// assignment whose lower bound may beat the best, when there are at most
// opt.MaxAssignments (see devices); otherwise search.Run of the placement
// as it is.
func Devices(ctx context.Context, sp spec.Spec, opt Options) (*search.Result, error) {
	p := sp.Placement
	if sp.MicroBatches < 1 {
		return nil, fmt.Errorf("search: %d micro-batches, want at least 1", sp.MicroBatches)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if p.HasCandidates() && (p.Open() || len(opt.Search.Start) == 0) {
		return devices(ctx, sp, opt)
	}
	return search.Run(ctx, sp, opt.Search)
}

// OptimalDevices is search.Optimal for a placement whose blocks may give
// candidates: where they do, the time-optimal search of every assignment
// (see optimalDevices); otherwise search.Optimal of the placement as it
// is.
func OptimalDevices(ctx context.Context, sp spec.Spec, opt OptimalOptions) (*search.OptimalResult, error) {
	p := sp.Placement
	if !p.HasCandidates() {
		return search.Optimal(ctx, sp, opt.Search)
	}
	if sp.MicroBatches < 1 {
		return nil, fmt.Errorf("search: %d micro-batches, want at least 1", sp.MicroBatches)
	}
	if opt.Search.LinkOrder && !(links.Rule{}).On(sp) {
		return nil, fmt.Errorf("search: placement %q: a link order is chosen only where links carry one transfer at a time (channels)", p.Name)
	}
	if opt.Search.LinkOrder && len(p.Lanes) > 0 {
		return nil, fmt.Errorf("search: placement %q: a link order is not chosen where device pairs have several links", p.Name)
	}
	return optimalDevices(ctx, sp, opt)
}

// HEFTAssignment is HEFT's choice of devices for sp's placement
// (heft.Run) as a start of the search over assignments
// (Options.Assignments), named "heft"; ok is false where HEFT finds no
// schedule (a memory budget it breaks).
func HEFTAssignment(sp spec.Spec) (a Assignment, ok bool) {
	r, err := heft.Run(sp.Placement, heft.Options{MicroBatches: sp.MicroBatches, Memory: sp.Memory})
	if err != nil {
		return Assignment{}, false
	}
	return Assignment{Name: "heft", Choice: r.Choice}, true
}

// withHEFTAssignment is given with HEFT's assignment of sp added after
// it, when HEFT schedules sp (a new slice: given is not changed).
func withHEFTAssignment(sp spec.Spec, given []Assignment) []Assignment {
	out := append([]Assignment(nil), given...)
	if a, ok := HEFTAssignment(sp); ok {
		out = append(out, a)
	}
	return out
}

// Result is Run's answer.
type Result struct {
	// Result is the search's on the placement it solved: p's own, or the
	// coarse placement's when Coarsened (its Schedule is then the coarse
	// one).
	*search.Result
	// Schedule is the verified schedule of p with its choice made: the
	// search's, or the expanded one when Coarsened.
	Schedule *schedule.Schedule
	// Coarsened is the coarsening's report, nil when p was searched as
	// it is.
	Coarsened *coarsen.Report
	// Total is the time the whole took.
	Total time.Duration
}

// Run is the search over assignments (Devices) of sp's placement p,
// whose blocks may choose their devices, with HEFT's assignment among its
// starts and HEFT's own schedule kept where it is shorter, so that it
// never returns worse than HEFT. With opt.Coarsen > 0 and more blocks
// than that, p is first coarsened to opt.Coarsen blocks (She et al. §IV,
// Algorithm 1; package coarsen), the coarse placement searched (HEFT's
// assignment of it among the starts; without refinement of its ends,
// unless opt.Search.RefineEffort or LNSSteps ask for it) and the answer
// expanded and re-timed on p (coarsen.Plan), and HEFT's schedule of p
// itself kept instead where it is shorter (Report.ByHEFT); otherwise p is
// searched as it is. Either way the schedule is verified.
func Run(ctx context.Context, sp spec.Spec, opt Options) (*Result, error) {
	t0 := time.Now()
	p := sp.Placement
	r, s, rep, err := solveMaybeCoarse(ctx, p, opt.Coarsen, func(ctx context.Context, q *placement.Placement, coarse bool) (*search.Result, *schedule.Schedule, error) {
		o := opt
		sq := sp
		sq.Placement = q
		o.Assignments = withHEFTAssignment(sq, opt.Assignments)
		// The coarse schedule is a plan of devices and orders, re-timed
		// on expansion: re-optimising its ends is not worth the time
		// unless asked for.
		if coarse && o.Search.RefineEffort == 0 {
			o.Search.RefineEffort = -1
		}
		if coarse && o.Search.LNSSteps == 0 {
			o.Search.LNSSteps = -1
		}
		r, err := Devices(ctx, sq, o)
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
		return &Result{Result: r, Schedule: s, Total: time.Since(t0)}, nil
	}
	if err := verify.Schedule(s); err != nil {
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
	return &Result{Result: r, Schedule: s, Coarsened: rep, Total: time.Since(t0)}, nil
}

// solveMaybeCoarse is the frame of Run and Optimal: with target ≤ 0 or
// no more blocks in p than target it solves p as it is (coarse false) and
// returns solve's result, its schedule and a nil report; otherwise it
// coarsens p to target blocks, solves the coarse placement (coarse true)
// and expands the answer onto p (Plan), returning solve's result on the
// coarse placement, the expanded schedule and the coarsening's report.
func solveMaybeCoarse[R any](ctx context.Context, p *placement.Placement, target int, solve func(ctx context.Context, q *placement.Placement, coarse bool) (R, *schedule.Schedule, error)) (R, *schedule.Schedule, *coarsen.Report, error) {
	var r R
	if target <= 0 || len(p.Blocks) <= target {
		r, s, err := solve(ctx, p, false)
		return r, s, nil, err
	}
	s, rep, err := coarsen.Plan(ctx, p, coarsen.Options{Target: target}, func(ctx context.Context, cp *placement.Placement) (*schedule.Schedule, error) {
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
// with candidates without being asked (to coarsen.DefaultTarget): She et al.
// solve graphs "typically fewer than 100 nodes".
const AutoBlocks = 100

// Target is the coarse block count flag says for p: flag itself when ≥ 0
// (0: never coarsen), and for -1 (the default) coarsen.DefaultTarget where p has
// candidates and more than AutoBlocks blocks, else 0.
func Target(p *placement.Placement, flag int) int {
	if flag >= 0 {
		return flag
	}
	if p.HasCandidates() && len(p.Blocks) > AutoBlocks {
		return coarsen.DefaultTarget
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
	Coarsened *coarsen.Report
	Total     time.Duration
}

// Optimal is Run with the time-optimal search over assignments
// (OptimalDevices) instead of Devices: exact on the placement it solves,
// which must have few enough assignments (DefaultOptimalAssignments):
// coarsen to a target that keeps it so (2 devices: 12 blocks).
func Optimal(ctx context.Context, sp spec.Spec, opt OptimalOptions) (*OptimalResult, error) {
	t0 := time.Now()
	p := sp.Placement
	r, s, rep, err := solveMaybeCoarse(ctx, p, opt.Coarsen, func(ctx context.Context, q *placement.Placement, _ bool) (*search.OptimalResult, *schedule.Schedule, error) {
		o := opt
		sq := sp
		sq.Placement = q
		o.Assignments = withHEFTAssignment(sq, opt.Assignments)
		r, err := OptimalDevices(ctx, sq, o)
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

// Fresh is a fresh search of p for old's micro-batches and budget, as
// tessel search runs it (the joint strategy) with opt's MaxNR and Seed,
// within limit (0: none), the devices chosen where p's blocks give
// candidates (Devices): what a replan is compared with. Callers verify
// its schedule.
func Fresh(ctx context.Context, p *placement.Placement, old *schedule.Schedule, opt search.ReplanOptions, limit time.Duration) (*search.Result, error) {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	return Devices(ctx, spec.Spec{Placement: p, MicroBatches: old.MicroBatches, Memory: old.Memory},
		Options{Search: search.Options{MaxNR: opt.MaxNR, Strategy: repetend.StrategyJoint, Seed: opt.Seed}})
}
