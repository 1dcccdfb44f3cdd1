package coarsen

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Solver plans a placement whose blocks may choose their devices: it
// returns a verified schedule of the placement with its choice made
// (placement's Choose), or an error.
type Solver func(ctx context.Context, p *placement.Placement) (*schedule.Schedule, error)

// Report is what coarsening did and what each step took.
type Report struct {
	Blocks, Coarse         int // blocks before and after
	EdgeMerges, PairMerges int
	Unit                   int // the coarse placement's time quantum (Options.Unit)
	// CoarseMakespan is the makespan of the coarse schedule (coarse
	// blocks' summed times, transfers the longest of their members'),
	// Makespan that of the expanded one.
	CoarseMakespan, Makespan int
	// HEFT is the makespan of HEFT's schedule of the original placement
	// where Search compared it with the expanded one (0: not compared);
	// ByHEFT says it was shorter and is the answer.
	HEFT                   int
	ByHEFT                 bool
	Coarsen, Solve, Expand time.Duration
}

// Plan coarsens p to o.Target blocks (Coarsen), solves the coarse
// placement with solve, and expands the coarse schedule to p's blocks
// (Expand): the result is a verified schedule of p with its choice made.
func Plan(ctx context.Context, p *placement.Placement, o Options, solve Solver) (*schedule.Schedule, Report, error) {
	var r Report
	r.Blocks = len(p.Blocks)
	t0 := time.Now()
	c, err := Coarsen(p, o)
	if err != nil {
		return nil, r, err
	}
	r.Coarse, r.EdgeMerges, r.PairMerges, r.Unit = len(c.Members), c.EdgeMerges, c.PairMerges, c.Unit
	t1 := time.Now()
	r.Coarsen = t1.Sub(t0)
	cs, err := solve(ctx, c.Placement)
	if err != nil {
		return nil, r, fmt.Errorf("coarsen: the coarse placement: %w", err)
	}
	t2 := time.Now()
	r.Solve = t2.Sub(t1)
	r.CoarseMakespan = schedule.Makespan(cs)
	s, err := c.Expand(p, cs)
	if err != nil {
		return nil, r, err
	}
	r.Expand = time.Since(t2)
	r.Makespan = schedule.Makespan(s)
	return s, r, nil
}
