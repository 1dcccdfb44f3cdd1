package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/deploy"
)

// fsdpFlags are export's and import's flags of FSDP-sharded stages.
func fsdpFlags(export bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.StringFlag{Name: "fsdp", Usage: "the FSDP `FILE`: which stages are sharded, their gathered parameters' memory, gather and reduce times, max_active_stages (docs/formats.md)"},
		&cli.IntFlag{Name: "max-active-stages", Usage: "with --fsdp: at most `N` stages hold gathered parameters at once on a rank (instead of the file's)"},
	}
	if export {
		fs = append(fs, &cli.StringFlag{Name: "unshard-lookahead", Usage: "with --fsdp: where the gathers go: tessel (the best of its own and PyTorch's, compared), or PyTorch's placement with full, auto or a list of distances per rank", Value: "tessel"})
	}
	return fs
}

func fsdpFromFlags(c *cli.Context) deploy.FSDPOptions {
	return deploy.FSDPOptions{File: c.String("fsdp"), MaxActive: c.Int("max-active-stages"), Lookahead: c.String("unshard-lookahead")}
}
