package smt

import (
	"errors"

	"github.com/tessel-pp/tessel/z3"
)

// Deadline is one pair of the latency rule (placement's "Latency"): task
// To ends at most Max after task From starts, plus Periods·P in a periodic
// problem:
//
//	s_To + t_To ≤ s_From + Max + Periods·P.
//
// Unlike a Prec it runs against the dependencies (from a micro-batch's
// sink back to its source), so it takes no part in the known orders, the
// heads and tails or the list schedules: the encoder asserts it, Feasible
// checks it, and a list schedule that breaks it is simply not a candidate.
//
// From may be Origin: then task To ends by Max (an absolute deadline, as
// a window of a fixed schedule needs for a micro-batch whose source is
// fixed before it).
type Deadline struct {
	From, To     int
	Max, Periods int
}

// Origin as a Deadline's From is time 0: s_To + t_To ≤ Max.
const Origin = -1

// assertDeadlines asserts the problem's deadlines; period is the term P
// of a periodic problem (nil otherwise).
func (e *Encoder) assertDeadlines(period *z3.Int) error {
	x := e.X
	for _, dl := range e.P.Deadlines {
		if dl.From == Origin {
			e.S.Assert(x.Le(x.Plus(e.Start[dl.To], e.P.Tasks[dl.To].Time), x.IntVal(dl.Max)))
			continue
		}
		rhs := x.Plus(e.Start[dl.From], dl.Max)
		if dl.Periods != 0 {
			if period == nil {
				return errors.New("smt: a deadline has a period term but the problem has no period")
			}
			rhs = x.Add(rhs, x.Scale(dl.Periods, *period))
		}
		e.S.Assert(x.Le(x.Plus(e.Start[dl.To], e.P.Tasks[dl.To].Time), rhs))
	}
	return x.Err()
}

// meetsDeadlines checks starts against the deadlines without a period
// term.
func (p *Problem) meetsDeadlines(starts []int) bool {
	for _, dl := range p.Deadlines {
		from := 0
		if dl.From != Origin {
			from = starts[dl.From]
		}
		if dl.Periods == 0 && starts[dl.To]+p.Tasks[dl.To].Time > from+dl.Max {
			return false
		}
	}
	return true
}

// AssertDeadlines adds deadlines after Encode (in the current scope, for
// a solver that reuses one encoding: see AssertPrecedences); a period term
// needs the encoder's period.
func (e *Encoder) AssertDeadlines(dls []Deadline) error {
	x := e.X
	for _, dl := range dls {
		if dl.From < 0 || dl.From >= len(e.Start) || dl.To < 0 || dl.To >= len(e.Start) {
			return errors.New("smt: deadline out of range")
		}
		rhs := x.Plus(e.Start[dl.From], dl.Max)
		if dl.Periods != 0 {
			rhs = x.Add(rhs, x.Scale(dl.Periods, e.Period))
		}
		e.S.Assert(x.Le(x.Plus(e.Start[dl.To], e.P.Tasks[dl.To].Time), rhs))
	}
	return x.Err()
}
