package search

import (
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/z3"
)

// The search's own errors: a caller asks errors.Is with these, never with
// the solver's (package smt, package z3), which the search wraps before
// they leave it. The messages stay the solver's.
var (
	// ErrInfeasible: the solver proved that no schedule fits the
	// problem (the memory or the latency budget).
	ErrInfeasible = errors.New("no schedule satisfies the constraints")
	// ErrStopped: the solver was interrupted, or the search's deadline
	// passed, before a schedule was found.
	ErrStopped = errors.New("search stopped")
)

// solverError is an error of the search that came from the solver: it
// is ErrInfeasible or ErrStopped where the solver's error says so.
type solverError struct{ error }

func (e solverError) Unwrap() error { return e.error }

func (e solverError) Is(target error) bool {
	switch target {
	case ErrInfeasible:
		return errors.Is(e.error, smt.ErrInfeasible)
	case ErrStopped:
		return errors.Is(e.error, z3.ErrInterrupted) || errors.Is(e.error, context.DeadlineExceeded)
	}
	return false
}

// own is err as the search's own error (nil stays nil).
func own(err error) error {
	if err == nil {
		return nil
	}
	return solverError{err}
}

// errOpen is the error of a placement whose blocks give candidates and
// none is chosen: package choose searches the choices of devices, and
// calls the search on each.
func errOpen(p *placement.Placement) error {
	return fmt.Errorf("search: placement %q: its blocks give candidates and none is chosen: choose the devices first (package choose)", p.Name)
}
