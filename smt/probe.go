package smt

import (
	"context"
	"errors"

	"github.com/tessel-pp/tessel/z3"
)

// ProbeMakespan is one step of the makespan searches (MinimizeMakespan,
// OptimalDecisions, MinimizeAssigned): in a scope of its own it asserts
// the makespan at most bound (through assertBound; bound < 0 asserts
// nothing), checks, counts the check in *checks and, when sat, hands the
// model to keep, which keeps the schedule if it is the best so far. The
// model is closed after keep. Anything but sat returns the solver's status
// and error; an error of keep (or of reading the model) returns Unknown.
func ProbeMakespan(ctx context.Context, s *z3.Solver, checks *int, bound int, assertBound func(int), keep func(*z3.Model) error) (z3.Status, error) {
	s.Push()
	defer s.Pop()
	if bound >= 0 {
		assertBound(bound)
	}
	st, err := s.Check(ctx)
	*checks++
	if st != z3.Sat {
		return st, err
	}
	m, err := s.Model()
	if err != nil {
		return z3.Unknown, err
	}
	defer m.Close()
	if err := keep(m); err != nil {
		return z3.Unknown, err
	}
	return z3.Sat, nil
}

// BisectMakespan is the binary search of MinimizeMakespan and
// OptimalDecisions between the proven lower bound lo and the makespan hi
// of the best schedule known: it probes the middle of [probeLo, hi) until
// they meet. A refuted bound raises lo while no probe has run out of
// effort below it (probeLo == lo); a probe out of effort proves nothing
// and only moves probeLo past it; an interrupted probe ends the search.
// After a sat probe hi is best(), the makespan of the best schedule kept.
// progress, when set, is told (lo, hi) before every probe. It returns the
// final lo (proven) and hi (achieved), or the first other error.
func BisectMakespan(lo, hi int, progress func(lo, hi int), probe func(bound int) (z3.Status, error), best func() int) (int, int, error) {
	probeLo := lo
	for probeLo < hi {
		if progress != nil {
			progress(lo, hi)
		}
		mid := probeLo + (hi-probeLo)/2
		st, err := probe(mid)
		switch {
		case errors.Is(err, z3.ErrInterrupted):
			probeLo = hi
		case errors.Is(err, z3.ErrEffort):
			probeLo = mid + 1
		case err != nil:
			return lo, hi, err
		case st == z3.Sat:
			hi = best()
		default:
			if probeLo == lo {
				lo = mid + 1
			}
			probeLo = mid + 1
		}
	}
	return lo, hi, nil
}
