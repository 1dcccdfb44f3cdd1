package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
)

type placementsOptions struct {
	Devices      int
	ForwardTime  int
	BackwardTime int
	Inference    bool
	// Spec carries the zero-bubble flags (split backward, chunks); its
	// name and file are not used.
	Spec placementSpec
}

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
			spec := placementSpec{
				SplitBackward: c.Bool("split-backward"), InputTime: c.Int("input-time"), WeightTime: c.Int("weight-time"),
				Chunks: c.Int("chunks"), Order: c.String("order"),
			}
			// dualpipe is listed too: the split times always apply.
			spec.Conflict = zeroBubbleConflict(c, spec.SplitBackward, true)
			return runPlacements(c.Context, placementsOptions{
				Devices: c.Int("devices"), ForwardTime: c.Int("forward-time"), BackwardTime: c.Int("backward-time"), Inference: c.Bool("infer"),
				Spec: spec,
			}, c.App.Writer)
		},
	}
}

// runPlacements prints every built-in: its summary, its blocks and one
// micro-batch scheduled as early as its dependencies allow.
func runPlacements(_ context.Context, opts placementsOptions, w io.Writer) error {
	if opts.Spec.Conflict != "" {
		return usageErrorf("placements: %s", opts.Spec.Conflict)
	}
	if err := checkTimes(opts.Devices, opts.ForwardTime, opts.BackwardTime); err != nil {
		return err
	}
	spec := opts.Spec
	spec.Devices, spec.ForwardTime, spec.BackwardTime, spec.Inference = opts.Devices, opts.ForwardTime, opts.BackwardTime, opts.Inference
	if spec.InputTime == 0 {
		spec.InputTime = placement.DefaultInputTime
	}
	if spec.WeightTime == 0 {
		spec.WeightTime = placement.DefaultWeightTime
	}
	if spec.Chunks == 0 {
		spec.Chunks = 1
	}
	if spec.Order == "" {
		spec.Order = string(placement.Loop)
	}
	return report.Builtins(w, spec.Options())
}

// checkTimes rejects device counts and times a built-in cannot have.
func checkTimes(devices, fwd, bwd int) error {
	if err := inputerr.AtLeast("devices", devices, 1); err != nil {
		return err
	}
	if err := inputerr.AtLeast("forward-time", fwd, 1); err != nil {
		return err
	}
	return inputerr.AtLeast("backward-time", bwd, 1)
}
