package partition

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/tessel-pp/tessel/z3"
)

// objectiveSearch is the search on an integer objective (a max load or a
// latency, in grid steps) that NonContiguous and MinSampleLatency share: each
// step one satisfiability check of "objective ≤ T". lo is proven (every T
// below it was refuted) and hi is achieved (a split of objective ≤ hi is
// known; math.MaxInt: none yet).
type objectiveSearch struct {
	sv     *z3.Solver
	lo, hi int
	checks int
	// bound asserts, in the check's scope, that the objective is ≤ T.
	bound func(T int)
	// keep reads the model of a sat check of bound T (check closes it
	// after), keeps its split if it is the best, and returns the objective
	// that bounds hi (in grid steps); hi becomes the least of it and T.
	keep func(m *z3.Model) (int, error)
	// progress, when set, is called after every check that ended (sat,
	// unsat, or cut short).
	progress func()
	// closed, when set, says the search may stop: a relaxation already
	// meets the best split.
	closed func() bool
}

// errNoSolution is improve's answer when even the unbounded check is
// unsat: no split exists at all.
var errNoSolution = errors.New("no solution")

// check asks for a split of objective ≤ T within half the time left:
// sat improves the best split (keep), unsat raises lo, and a check cut
// short says neither.
func (o *objectiveSearch) check(ctx context.Context, T int) (z3.Status, error) {
	sub, cancel := ctx, context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		sub, cancel = context.WithTimeout(ctx, time.Duration(float64(time.Until(dl))*0.5))
	}
	defer cancel()
	o.sv.Push()
	defer o.sv.Pop()
	o.bound(T)
	st, err := o.sv.Check(sub)
	o.checks++
	if err != nil {
		if errors.Is(err, z3.ErrInterrupted) {
			return z3.Unknown, nil
		}
		return z3.Unknown, err
	}
	switch st {
	case z3.Unsat:
		o.lo = max(o.lo, T+1)
	case z3.Sat:
		m, err := o.sv.Model()
		if err != nil {
			return z3.Unknown, err
		}
		best, err := o.keep(m)
		m.Close()
		if err != nil {
			return z3.Unknown, err
		}
		o.hi = min(T, best)
	}
	if o.progress != nil {
		o.progress()
	}
	return st, nil
}

// open says whether the search has anything left to do.
func (o *objectiveSearch) open(ctx context.Context) bool {
	return o.lo < o.hi && (o.closed == nil || !o.closed()) && ctx.Err() == nil
}

// run first improves the split, asking for anything better than the best
// (anything at all while hi is math.MaxInt) until the solver proves there
// is none or a check runs out of time, and then raises the lower bound by
// bisection, retreating toward the bound when a check runs out of time
// (smaller objectives are easier to refute). It returns errNoSolution when
// the unbounded check is unsat.
func (o *objectiveSearch) run(ctx context.Context) error {
	for o.open(ctx) {
		T := o.hi - 1
		if o.hi == math.MaxInt {
			T = math.MaxInt
		}
		st, err := o.check(ctx, T)
		if err != nil {
			return err
		}
		if st == z3.Unknown {
			break
		}
		if st == z3.Unsat && T == math.MaxInt {
			return errNoSolution
		}
	}
	if o.hi == math.MaxInt {
		return nil
	}
	probe := o.lo + (o.hi-o.lo)/2
	for o.open(ctx) {
		st, err := o.check(ctx, probe)
		if err != nil {
			return err
		}
		if st == z3.Unknown {
			if probe <= o.lo {
				break
			}
			probe = o.lo + (probe-o.lo)/2
			continue
		}
		probe = o.lo + (o.hi-o.lo)/2
	}
	return nil
}
