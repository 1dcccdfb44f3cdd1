package main

import (
	"context"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"tessel/placement"
)

// placementFlags are the flags of every command that takes a placement.
func placementFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "placement", Aliases: []string{"p"}, Usage: "built-in placement: " + joinNames(placement.BuiltinNames()), Value: "v-shape"},
		&cli.StringFlag{Name: "placement-file", Usage: "read the placement from a JSON `FILE` instead (see the design notes for the format)"},
		&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "number of devices D of a built-in placement", Value: placement.DefaultDevices},
		&cli.IntFlag{Name: "forward-time", Usage: "time of a forward block of a built-in placement", Value: placement.DefaultForwardTime},
		&cli.IntFlag{Name: "backward-time", Usage: "time of a backward block of a built-in placement (3: recompute on)", Value: placement.DefaultBackwardTime},
		&cli.BoolFlag{Name: "infer", Usage: "inference variant of a built-in placement: no backward blocks, memory 0"},
	}
}

// placementSpec is what placementFlags parse to.
type placementSpec struct {
	Name         string
	File         string
	Devices      int
	ForwardTime  int
	BackwardTime int
	Inference    bool
}

func placementSpecFrom(c *cli.Context) placementSpec {
	return placementSpec{
		Name:         c.String("placement"),
		File:         c.String("placement-file"),
		Devices:      c.Int("devices"),
		ForwardTime:  c.Int("forward-time"),
		BackwardTime: c.Int("backward-time"),
		Inference:    c.Bool("infer"),
	}
}

// load returns the placement the spec names; every failure is a usage error.
func (s placementSpec) load() (*placement.Placement, error) {
	if s.File == "" {
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
	p, err := placement.Builtin(s.Name, placement.Options{
		Devices: s.Devices, ForwardTime: s.ForwardTime, BackwardTime: s.BackwardTime, Inference: s.Inference,
	})
	if err != nil {
		return nil, &usageError{err}
	}
	return p, nil
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
