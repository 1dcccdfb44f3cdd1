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

// writeCoarsened writes and prints a coarsened search's verified
// schedule.
func writeCoarsened(s *schedule.Schedule, sum report.CoarsenSummary, command string, out outfile.Schedule, json bool, stdout io.Writer) error {
	if err := out.Write(s); err != nil {
		return err
	}
	if json {
		return textfmt.JSON(stdout, sum)
	}
	return sum.WriteText(stdout, command)
}

// withLimit bounds ctx by a --time-limit; 0 means no limit.
func withLimit(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit > 0 {
		return context.WithTimeout(ctx, limit)
	}
	return context.WithCancel(ctx)
}
