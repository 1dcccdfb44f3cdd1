package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"tessel/placement"
	"tessel/schedule"
	"tessel/smt"
)

type placementsOptions struct {
	Devices      int
	ForwardTime  int
	BackwardTime int
	Inference    bool
}

func placementsCommand() *cli.Command {
	return &cli.Command{
		Name:  "placements",
		Usage: "list the built-in placements, each with a picture of one micro-batch",
		Description: "Each built-in follows the paper's evaluation: forward time 1 memory +1, backward time 3\n" +
			"memory -1, blocks on all devices time 1 memory 0; stage s on device s. Write your own\n" +
			"placement as JSON (see testdata/placements/) and pass it with --placement-file.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "number of devices D", Value: placement.DefaultDevices},
			&cli.IntFlag{Name: "forward-time", Usage: "time of a forward block", Value: placement.DefaultForwardTime},
			&cli.IntFlag{Name: "backward-time", Usage: "time of a backward block", Value: placement.DefaultBackwardTime},
			&cli.BoolFlag{Name: "infer", Usage: "inference variants (no backward blocks)"},
		},
		Action: func(c *cli.Context) error {
			return runPlacements(c.Context, placementsOptions{
				Devices: c.Int("devices"), ForwardTime: c.Int("forward-time"), BackwardTime: c.Int("backward-time"), Inference: c.Bool("infer"),
			}, c.App.Writer)
		},
	}
}

// runPlacements prints every built-in: its summary, its blocks and one
// micro-batch scheduled as early as its dependencies allow.
func runPlacements(_ context.Context, opts placementsOptions, w io.Writer) error {
	if err := checkTimes(opts.Devices, opts.ForwardTime, opts.BackwardTime); err != nil {
		return err
	}
	for k, name := range placement.BuiltinNames() {
		if k > 0 {
			fmt.Fprintln(w)
		}
		p, err := placement.Builtin(name, placement.Options{
			Devices: opts.Devices, ForwardTime: opts.ForwardTime, BackwardTime: opts.BackwardTime, Inference: opts.Inference,
		})
		if err != nil {
			fmt.Fprintf(w, "%s: not available with these options: %v\n", name, err)
			continue
		}
		fmt.Fprintf(w, "%s — %s\n", p.Name, placement.BuiltinSummary(name))
		fmt.Fprintf(w, "%d blocks on %d devices, device loads %v, critical path %d\n", p.K(), p.Devices, p.Loads(), p.CriticalPath())
		s, err := oneMicroBatch(p)
		if err != nil {
			return err
		}
		if err := schedule.RenderText(s, w); err != nil {
			return err
		}
	}
	return nil
}

// oneMicroBatch schedules one micro-batch with a list schedule (every
// block as soon as its inputs and devices are ready): the picture of a
// placement, its independent branches side by side.
func oneMicroBatch(p *placement.Placement) (*schedule.Schedule, error) {
	refs := smt.AllInstances(p, 1)
	starts := smt.Greedy(smt.InstanceProblem(p, refs, 0, nil))
	if starts == nil {
		return nil, fmt.Errorf("placement %q: no list schedule of one micro-batch", p.Name)
	}
	s := &schedule.Schedule{Placement: p, MicroBatches: 1}
	for k, r := range refs {
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: starts[k]})
	}
	if err := schedule.Verify(s); err != nil {
		return nil, err
	}
	return s, nil
}

// checkTimes rejects device counts and times a built-in cannot have.
func checkTimes(devices, fwd, bwd int) error {
	if err := checkAtLeast("devices", devices, 1); err != nil {
		return err
	}
	if err := checkAtLeast("forward-time", fwd, 1); err != nil {
		return err
	}
	return checkAtLeast("backward-time", bwd, 1)
}
