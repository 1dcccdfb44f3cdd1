// Package inputerr marks bad input: flags that do not go together, files
// that cannot be read or written, values out of range. A caller tells such
// a failure (the user's to mend; the command exits 2) from a failure of
// the work itself with Is.
package inputerr

import (
	"errors"
	"fmt"
)

// Error is bad input; its message is Err's.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf is bad input with the message fmt.Errorf makes.
func Errorf(format string, args ...any) error {
	return &Error{fmt.Errorf(format, args...)}
}

// Wrap marks err as bad input (nil stays nil; bad input stays as it is).
func Wrap(err error) error {
	if err == nil || Is(err) {
		return err
	}
	return &Error{err}
}

// Is says whether err is, or wraps, bad input.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// AtLeast refuses a flag's value below min: "--flag must be at least
// min, got v".
func AtLeast(flag string, v, min int) error {
	if v < min {
		return Errorf("--%s must be at least %d, got %d", flag, min, v)
	}
	return nil
}

// Bound is a flag's value and the least it may be, for AtLeastAll.
type Bound struct {
	Flag   string
	V, Min int
}

// AtLeastAll is AtLeast of each bound in turn: the first refusal.
func AtLeastAll(bounds ...Bound) error {
	for _, b := range bounds {
		if err := AtLeast(b.Flag, b.V, b.Min); err != nil {
			return err
		}
	}
	return nil
}
