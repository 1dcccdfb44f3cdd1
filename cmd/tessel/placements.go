package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
)

func placementsCommand() *cli.Command {
	return &cli.Command{
		Name:  "placements",
		Usage: "list the built-in placements, each with a picture of one micro-batch",
		Description: "Each built-in follows the paper's evaluation: forward time 1 memory +1, backward time 3\n" +
			"memory -1, blocks on all devices time 1 memory 0; stage s on device s. Write your own\n" +
			"placement as JSON (see testdata/placements/) and pass it with --placement-file.\n\n" +
			"The zero-bubble family: --split-backward splits every backward into an input block\n" +
			"(--input-time, default 1, memory 0) and a weight block (--weight-time, default 1, memory -1);\n" +
			"--chunks C --order loop|v cuts the chain of v-, x- and m-shape into C·D stages (loop: stage s\n" +
			"on device s mod D; v: down the devices and back up); dualpipe is the x-shape split.",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "number of devices D", Value: placement.DefaultDevices},
			&cli.IntFlag{Name: "forward-time", Usage: "time of a forward block", Value: placement.DefaultForwardTime},
			&cli.IntFlag{Name: "backward-time", Usage: "time of a backward block", Value: placement.DefaultBackwardTime},
			&cli.BoolFlag{Name: "infer", Usage: "inference variants (no backward blocks)"},
		}, zeroBubbleFlags()...),
		Action: func(c *cli.Context) error {
			s := placementSpec{
				Devices: c.Int("devices"), ForwardTime: c.Int("forward-time"), BackwardTime: c.Int("backward-time"), Inference: c.Bool("infer"),
				SplitBackward: c.Bool("split-backward"), InputTime: c.Int("input-time"), WeightTime: c.Int("weight-time"),
				Chunks: c.Int("chunks"), Order: c.String("order"),
			}
			// dualpipe is listed too: the split times always apply.
			if conflict := zeroBubbleConflict(c, s.SplitBackward, true); conflict != "" {
				return usageErrorf("placements: %s", conflict)
			}
			if err := inputerr.AtLeastAll(inputerr.Bound{Flag: "devices", V: s.Devices, Min: 1},
				inputerr.Bound{Flag: "forward-time", V: s.ForwardTime, Min: 1}, inputerr.Bound{Flag: "backward-time", V: s.BackwardTime, Min: 1}); err != nil {
				return err
			}
			// Every built-in: its summary, its blocks and one micro-batch
			// scheduled as early as its dependencies allow.
			return report.Builtins(c.App.Writer, s.Options())
		},
	}
}
