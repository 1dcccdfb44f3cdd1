package coarsen

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
)

// HEFTAssignment is HEFT's choice of devices for p (heft.Run) as a start
// of the search over assignments (search.Options.Assignments), named
// "heft"; ok is false where HEFT finds no schedule (a memory budget it
// breaks).
func HEFTAssignment(p *placement.Placement, n, memory int) (a search.Assignment, ok bool) {
	r, err := heft.Run(p, heft.Options{MicroBatches: n, Memory: memory})
	if err != nil {
		return search.Assignment{}, false
	}
	return search.Assignment{Name: "heft", Choice: r.Choice}, true
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
// starts, so that it never returns worse than HEFT. With target > 0 and
// more blocks than target, p is first coarsened to target blocks (She et
// al. §IV, Algorithm 1), the coarse placement searched (HEFT's assignment
// of it among the starts) and the answer expanded and re-timed on p
// (Plan); otherwise p is searched as it is. Either way the schedule is
// verified.
func Search(ctx context.Context, p *placement.Placement, target int, opt search.Options) (*SearchResult, error) {
	t0 := time.Now()
	withHEFT := func(q *placement.Placement) search.Options {
		o := opt
		if a, ok := HEFTAssignment(q, opt.MicroBatches, opt.Memory); ok {
			o.Assignments = append(append([]search.Assignment(nil), opt.Assignments...), a)
		}
		return o
	}
	if target <= 0 || len(p.Blocks) <= target {
		r, err := search.Run(ctx, p, withHEFT(p))
		if err != nil {
			return nil, err
		}
		return &SearchResult{Result: r, Schedule: r.Schedule, Total: time.Since(t0)}, nil
	}
	var coarse *search.Result
	s, rep, err := Plan(ctx, p, Options{Target: target}, func(ctx context.Context, cp *placement.Placement) (*schedule.Schedule, error) {
		r, err := search.Run(ctx, cp, withHEFT(cp))
		if err != nil {
			return nil, err
		}
		coarse = r
		return r.Schedule, nil
	})
	if err != nil {
		return nil, err
	}
	if err := schedule.Verify(s); err != nil {
		return nil, fmt.Errorf("coarsen: the expanded schedule: %w", err)
	}
	return &SearchResult{Result: coarse, Schedule: s, Coarsened: &rep, Total: time.Since(t0)}, nil
}
