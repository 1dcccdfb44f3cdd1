package main

import (
	"github.com/urfave/cli/v2"
)

// coarsenFlag is --coarsen of search (default -1: automatic) and optimal
// (default 0: never).
func coarsenFlag(command string) cli.Flag {
	if command == "optimal" {
		return &cli.IntFlag{Name: "coarsen", Usage: "for a placement whose blocks choose their devices: merge its blocks down to `N` first (She et al. Algorithm 1), solve that exactly, expand and re-time (0: never; the coarse placement must have few assignments, e.g. 12 blocks on 2 devices)"}
	}
	return &cli.IntFlag{Name: "coarsen", Value: -1, Usage: "for a placement whose blocks choose their devices: merge its blocks down to `N` first (She et al. Algorithm 1), search that, expand and re-time (0: never; default: to 40 above 100 blocks)"}
}
