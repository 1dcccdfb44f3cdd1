package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/cluster"
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

// checkDecisions rejects the decision flags that cannot go together.
func checkDecisions(o placement.Decisions) error {
	if o.OffloadTime < 0 {
		return usageErrorf("--offload-time must be at least 1, got %d", o.OffloadTime)
	}
	if o.OffloadTime > 0 && !o.Offload {
		return usageErrorf("--offload-time needs --offload")
	}
	return nil
}

// declare applies the decisions' declarations to the placement as given
// (before its cluster); failures are usage errors.
func declare(given *placement.Placement, o placement.Decisions) (*placement.Placement, error) {
	if err := checkDecisions(o); err != nil {
		return nil, err
	}
	q, err := placement.Declare(given, o)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return q, nil
}

// loadFor is loadOn with the decisions o, when any, declared on the
// placement as given (loadDeclared).
func (s placementSpec) loadFor(o placement.Decisions) (p, given *placement.Placement, c *cluster.Cluster, err error) {
	if p, given, c, err = s.loadOn(); err != nil || o == (placement.Decisions{}) {
		return p, given, c, err
	}
	p, given, err = s.loadDeclared(o)
	return p, given, c, err
}

// loadDeclared is loadOn with the decisions declared on the placement as
// given.
func (s placementSpec) loadDeclared(o placement.Decisions) (p, given *placement.Placement, err error) {
	given, err = s.loadGiven()
	if err != nil {
		return nil, nil, err
	}
	if given, err = declare(given, o); err != nil {
		return nil, nil, err
	}
	p, _, err = s.Cluster.on(given)
	return p, given, err
}
