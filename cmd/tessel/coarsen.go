package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
)

// coarsenFlag is --coarsen of search (default -1: automatic) and optimal
// (default 0: never).
func coarsenFlag(command string) cli.Flag {
	if command == "optimal" {
		return &cli.IntFlag{Name: "coarsen", Usage: "for a placement whose blocks choose their devices: merge its blocks down to `N` first (She et al. Algorithm 1), solve that exactly, expand and re-time (0: never; the coarse placement must have few assignments, e.g. 12 blocks on 2 devices)"}
	}
	return &cli.IntFlag{Name: "coarsen", Value: -1, Usage: "for a placement whose blocks choose their devices: merge its blocks down to `N` first (She et al. Algorithm 1), search that, expand and re-time (0: never; default: to 40 above 100 blocks)"}
}

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
func writeCoarsened(s *schedule.Schedule, sum report.CoarsenSummary, command string, out outputs, stdout io.Writer) error {
	if err := out.Write(s); err != nil {
		return err
	}
	if out.JSON {
		return printJSON(stdout, sum)
	}
	return sum.WriteText(stdout, command)
}
