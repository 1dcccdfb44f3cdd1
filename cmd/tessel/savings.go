package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/placement"
)

// savingsFlags turn on the decisions to offload or recompute activations
// (off by default: every existing output stays the same).
func savingsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "offload", Usage: "let the schedule offload activations to host memory and reload them before their backward (OptPipe), where the placement declares an offload time or --offload-time gives one"},
		&cli.IntFlag{Name: "offload-time", Usage: "with --offload: every forward activation that declares no offload time takes `T` to offload and T to reload, on its device's host channel"},
		&cli.BoolFlag{Name: "recompute", Usage: "let the schedule drop activations and recompute the forward before its backward (activation checkpointing)"},
	}
}

func savingsFrom(c *cli.Context) placement.Decisions {
	return placement.Decisions{Offload: c.Bool("offload"), OffloadTime: c.Int("offload-time"), Recompute: c.Bool("recompute")}
}
