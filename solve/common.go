// Package solve runs the searching commands as library calls: tessel
// search (Search), optimal (Optimal) and replan (Replan). Each checks its
// options (a refusal is bad input, package inputerr), loads the placement
// or schedule, runs the search under the time limit, verifies and writes
// the schedule (package outfile) and prints its report (package report).
package solve

import (
	"context"
	"io"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
)

// coarsenTarget checks --coarsen against p and returns the coarse block
// count (0: none).
func coarsenTarget(p *placement.Placement, flag int) (int, error) {
	t, err := choose.CheckedTarget(p, flag)
	if err != nil {
		return 0, inputerr.Wrap(err)
	}
	return t, nil
}

// answerTo is where a command's answer goes: its files and stdout, as
// text or JSON.
type answerTo struct {
	out    outfile.Schedule
	json   bool
	stdout io.Writer
}

// coarsened writes and prints a coarsened search's verified schedule.
func (a answerTo) coarsened(s *schedule.Schedule, sum report.CoarsenSummary, command string) error {
	if err := a.out.Write(s); err != nil {
		return err
	}
	if a.json {
		return textfmt.JSON(a.stdout, sum)
	}
	return sum.WriteText(a.stdout, command)
}

// withLimit bounds ctx by a --time-limit; 0 means no limit.
func withLimit(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit > 0 {
		return context.WithTimeout(ctx, limit)
	}
	return context.WithCancel(ctx)
}
