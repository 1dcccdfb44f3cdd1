package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
)

// verifyOptions are the flags of tessel verify.
type verifyOptions struct {
	Schedule string // path of the schedule file
}

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check a schedule file, independently of the solver that made it",
		UsageText: "tessel verify --schedule FILE",
		Description: "Reads a schedule file (placement, micro_batches, memory, instances) and checks\n" +
			"every instance is present once, dependencies hold, no device runs two blocks at\n" +
			"once and no device exceeds the memory budget; a repetend or metrics in the file\n" +
			"are checked too, never trusted. Prints one line when valid, else every violation,\n" +
			"one a line, and exits with status 1.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
		},
		Action: func(c *cli.Context) error {
			return runVerify(c.Context, verifyOptions{Schedule: c.String("schedule")}, c.App.Writer)
		},
	}
}

// runVerify loads and verifies the schedule file. A file that cannot be
// read or parsed is a usage error; an invalid schedule prints its
// violations on stdout and returns an error saying how many.
func runVerify(_ context.Context, opts verifyOptions, stdout io.Writer) error {
	if opts.Schedule == "" {
		return usageErrorf("verify: --schedule FILE is required")
	}
	s, err := schedule.LoadForm(opts.Schedule) // a periodic file is checked from its period
	if err != nil {
		return inputerr.Wrap(err)
	}
	err = report.Verify(stdout, s)
	var ve *schedule.VerifyError
	if errors.As(err, &ve) {
		return fmt.Errorf("%s: invalid schedule: %s", opts.Schedule, ve.CountText())
	}
	return err
}
