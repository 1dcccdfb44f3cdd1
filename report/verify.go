package report

import (
	"errors"
	"io"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// Verify writes tessel verify's report of s, checked by verify.Schedule
// from its required fields only: one line when it is valid
// (schedule.ValidText), else every violation, one a line. It returns the
// verifier's error (a *schedule.VerifyError for violations) or the
// writer's.
func Verify(w io.Writer, s *schedule.Schedule) error {
	err := verify.Schedule(s)
	var ve *schedule.VerifyError
	if errors.As(err, &ve) {
		if _, werr := io.WriteString(w, ve.List()); werr != nil {
			return werr
		}
		return err
	}
	if err != nil {
		return err
	}
	how := ""
	if verify.FromPeriod(s) {
		how = " (from its period)"
	}
	_, err = io.WriteString(w, schedule.ValidTextHow(s, how))
	return err
}
