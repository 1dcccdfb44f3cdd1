package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"tessel/placement"
)

// placementFlags are the flags of every command that takes a placement.
func placementFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "placement", Aliases: []string{"p"}, Usage: "built-in placement: " + joinNames(placement.BuiltinNames()), Value: "v-shape"},
		&cli.StringFlag{Name: "placement-file", Usage: "read the placement from a JSON `FILE` instead (see the design notes for the format)"},
		&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "number of devices D of a built-in placement", Value: placement.DefaultDevices},
		&cli.IntFlag{Name: "forward-time", Usage: "time of a forward block of a built-in placement", Value: placement.DefaultForwardTime},
		&cli.IntFlag{Name: "backward-time", Usage: "time of a backward block of a built-in placement (3: recompute on)", Value: placement.DefaultBackwardTime},
		&cli.BoolFlag{Name: "infer", Usage: "inference variant of a built-in placement: no backward blocks, memory 0"},
	}, zeroBubbleFlags()...)
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

// placementSpec is what placementFlags parse to.
type placementSpec struct {
	Name          string
	File          string
	Devices       int
	ForwardTime   int
	BackwardTime  int
	Inference     bool
	SplitBackward bool
	InputTime     int
	WeightTime    int
	Chunks        int
	Order         string
	// conflict is a usage error found while parsing: flags that do not go
	// together.
	conflict string
}

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
	}
	split := s.SplitBackward || s.Name == "dualpipe"
	s.conflict = zeroBubbleConflict(c, split, split)
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

// load returns the placement the spec names; every failure is a usage error.
func (s placementSpec) load() (*placement.Placement, error) {
	if s.File == "" {
		if s.conflict != "" {
			return nil, usageErrorf("%s", s.conflict)
		}
		if err := checkTimes(s.Devices, s.ForwardTime, s.BackwardTime); err != nil {
			return nil, err
		}
	}
	if s.File != "" {
		p, err := placement.Load(s.File)
		if err != nil {
			return nil, &usageError{err}
		}
		return p, nil
	}
	p, err := placement.Builtin(s.Name, s.options())
	if err != nil {
		return nil, &usageError{err}
	}
	return p, nil
}

// options are the built-in's options the spec gives.
func (s placementSpec) options() placement.Options {
	return placement.Options{
		Devices: s.Devices, ForwardTime: s.ForwardTime, BackwardTime: s.BackwardTime, Inference: s.Inference,
		SplitBackward: s.SplitBackward, InputTime: s.InputTime, WeightTime: s.WeightTime,
		Chunks: s.Chunks, Order: placement.Order(s.Order),
	}
}

func joinNames(names []string) string { return strings.Join(names, ", ") }

// checkAtLeast rejects a flag value below min with a usage error.
func checkAtLeast(flag string, v, min int) error {
	if v < min {
		return usageErrorf("--%s must be at least %d, got %d", flag, min, v)
	}
	return nil
}

// withLimit bounds ctx by a --time-limit; 0 means no limit.
func withLimit(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit > 0 {
		return context.WithTimeout(ctx, limit)
	}
	return context.WithCancel(ctx)
}
