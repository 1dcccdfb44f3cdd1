package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// placementFlags are the flags of every command that takes a placement.
func placementFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "placement", Aliases: []string{"p"}, Usage: "built-in placement: " + joinNames(placement.BuiltinNames()), Value: "v-shape"},
		&cli.StringFlag{Name: "placement-file", Usage: "read the placement from a JSON `FILE` instead (format: docs/formats.md)"},
		&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "number of devices D of a built-in placement", Value: placement.DefaultDevices},
		&cli.IntFlag{Name: "forward-time", Usage: "time of a forward block of a built-in placement", Value: placement.DefaultForwardTime},
		&cli.IntFlag{Name: "backward-time", Usage: "time of a backward block of a built-in placement (3: recompute on)", Value: placement.DefaultBackwardTime},
		&cli.BoolFlag{Name: "infer", Usage: "inference variant of a built-in placement: no backward blocks, memory 0"},
		&cli.StringFlag{Name: "overlap-time", Usage: "let a forward and a whole backward of two micro-batches on one device run as one overlapped action (DualPipe's F&B) taking `T`, or a factor of F + B such as 0.7x (docs/overlap.md)"},
	}, append(zeroBubbleFlags(), clusterFlags()...)...)
}

// clusterFlags put a placement on a cluster: a cluster file, or the
// common cases of one without a file.
func clusterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cluster", Usage: "run the placement on the cluster in a JSON `FILE` (device speeds and memories, link latencies and times per unit; format: docs/formats.md)"},
		&cli.StringFlag{Name: "device-speed", Usage: "without a cluster file: devices of other speeds, `D=S,...` (a block of time t takes ⌈t/S⌉ on device D; the others have speed 1)"},
		&cli.IntFlag{Name: "transfer-time", Usage: "without a cluster file: every tensor between two devices takes `T` (dependencies between blocks that share a device take 0)"},
		&cli.BoolFlag{Name: "channels", Usage: "each link, in each direction, carries one transfer at a time: transfers that share one queue in the order their producers start (as the cluster file's \"channels\": true)"},
	}
}

// clusterFlag is the flag of clusterFlags with this name, for the
// commands that take only some of them.
func clusterFlag(name string) cli.Flag {
	for _, f := range clusterFlags() {
		if f.Names()[0] == name {
			return f
		}
	}
	panic("no cluster flag " + name)
}

// clusterSpec is what clusterFlags parse to (package spec loads it).
type clusterSpec = spec.ClusterSource

func clusterSpecFrom(c *cli.Context) clusterSpec {
	return clusterSpec{File: c.String("cluster"), DeviceSpeed: c.String("device-speed"), TransferTime: c.Int("transfer-time"), QueuedLinks: c.Bool("channels")}
}

// zeroBubbleFlags shape a built-in placement of the zero-bubble family:
// the backward split into input and weight blocks, and chunks.
func zeroBubbleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "split-backward", Usage: "split every backward block into an input block (gradient for the inputs, memory 0) and a weight block (gradient for the weights, memory -1), as the zero-bubble papers do"},
		&cli.IntFlag{Name: "input-time", Usage: "time of an input block of a split backward", Value: placement.DefaultInputTime},
		&cli.IntFlag{Name: "weight-time", Usage: "time of a weight block of a split backward", Value: placement.DefaultWeightTime},
		&cli.IntFlag{Name: "chunks", Usage: "cut the chain of v-, x- or m-shape into `C`·D stages, C per device", Value: 1},
		&cli.StringFlag{Name: "order", Usage: "where the chunks go: loop (stage s on device s mod D, interleaved 1F1B) or v (down the devices and back up, ZB-V)", Value: string(placement.Loop)},
	}
}

// placementSpec is what placementFlags parse to (package spec loads
// it; every failure to load it is a usage error, see bad).
type placementSpec = spec.Source

func placementSpecFrom(c *cli.Context) placementSpec {
	s := placementSpec{
		Name:          c.String("placement"),
		File:          c.String("placement-file"),
		Devices:       c.Int("devices"),
		ForwardTime:   c.Int("forward-time"),
		BackwardTime:  c.Int("backward-time"),
		Inference:     c.Bool("infer"),
		SplitBackward: c.Bool("split-backward"),
		InputTime:     c.Int("input-time"),
		WeightTime:    c.Int("weight-time"),
		Chunks:        c.Int("chunks"),
		Order:         c.String("order"),
		Cluster:       clusterSpecFrom(c),
		OverlapTime:   c.String("overlap-time"),
	}
	split := s.SplitBackward || s.Name == "dualpipe"
	s.Conflict = zeroBubbleConflict(c, split, split)
	return s
}

// zeroBubbleConflict names flags of the zero-bubble family that are out
// of range or do not go together, or returns "": split says the backward
// is split, splitTimes that --input-time and --weight-time apply.
func zeroBubbleConflict(c *cli.Context, split, splitTimes bool) string {
	for _, f := range []string{"input-time", "weight-time", "chunks"} {
		if v := c.Int(f); v < 1 {
			return fmt.Sprintf("--%s must be at least 1, got %d", f, v)
		}
	}
	switch {
	case split && c.IsSet("backward-time"):
		return "--backward-time does not apply to a split backward; give --input-time and --weight-time"
	case !splitTimes && (c.IsSet("input-time") || c.IsSet("weight-time")):
		return "--input-time and --weight-time need --split-backward (or --placement dualpipe)"
	case c.IsSet("order") && c.Int("chunks") < 2:
		return "--order needs --chunks 2 or more"
	}
	return ""
}

func joinNames(names []string) string { return strings.Join(names, ", ") }
