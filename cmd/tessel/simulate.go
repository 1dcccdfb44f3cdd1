package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/torchcsv"
	"github.com/tessel-pp/tessel/verify"
)

// simulateOptions are the flags of tessel simulate.
type simulateOptions struct {
	Schedule string // schedule file, or
	Programs string // directory of rank<R>.json written by tessel gen
	CommTime int
	// commSet says --comm-time was given (it does not go with a cluster).
	commSet  bool
	Cluster  clusterSpec
	Channels bool
	Blocking bool // only the blocking programs
	// TorchRecv also runs the schedule as PyTorch's runtime runs its
	// compute_comms CSV, receives early and deferred, on serial links.
	TorchRecv bool
	JSON      bool
}

func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:      "simulate",
		Usage:     "run a schedule's per-device programs in a simulator: makespan, idle time, deadlocks",
		UsageText: "tessel simulate --schedule FILE [--comm-time 1 | --cluster FILE | --transfer-time T --device-speed D=S] [--channels] [--blocking] [--torch-recv] [--json]\ntessel simulate --programs DIR [--comm-time 1] [--json]",
		Description: "Turns a schedule into one program per device (every tensor that crosses devices\n" +
			"sent right after its producer, in one global order) and runs the programs event by\n" +
			"event: blocks take their time, every transfer takes --comm-time. Reports the\n" +
			"makespan, the idle time of every device and the bubble rate, for non-blocking\n" +
			"programs (receives posted early, waits right before the consumer) and blocking\n" +
			"ones (send and receive inline), and the gain of non-blocking (the paper's Fig. 17).\n" +
			"With --programs, runs the programs tessel gen wrote (possibly edited) instead,\n" +
			"and reports a deadlock as the cycle of devices waiting for each other.\n" +
			"On a cluster (--cluster, --device-speed, --transfer-time, or the one the schedule\n" +
			"file records) blocks take their time on their devices and every transfer its own\n" +
			"time c_ij, the rule the search uses: the non-blocking programs of a searched schedule\n" +
			"then end exactly at its makespan. With --channels each ordered pair of devices carries\n" +
			"one transfer at a time, and the report says how much later the run ends for it; a\n" +
			"schedule searched with channels is simulated with them, and ends at its makespan too.\n" +
			"A schedule that offloads runs its offloads and reloads on the host channels, one at a\n" +
			"time each, for the offload time of its placement; a gradient block waits for its reload\n" +
			"(the report says how long in total).\n" +
			"With --torch-recv, the schedule (a chain of stages) also runs as PyTorch's runtime runs its\n" +
			"compute_comms CSV, with every rank's sends and receives one at a time in the order posted\n" +
			"(one p2p stream per rank): once with the receives where PyTorch's _add_send_recv puts\n" +
			"them, early, once deferred (its _defer_recv_ops). It reports each run's makespan, when\n" +
			"each stage's first compute starts in either and how much a front-loaded receive delays\n" +
			"it, and which order ends first (tessel export --recv auto writes that one).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
			&cli.StringFlag{Name: "programs", Usage: "simulate the programs rank0.json, rank1.json, … in `DIR` instead"},
			&cli.IntFlag{Name: "comm-time", Usage: "time of one transfer between two devices", Value: 1},
			&cli.BoolFlag{Name: "blocking", Usage: "simulate blocking programs only (default: both modes and the gain)"},
			clusterFlag("cluster"), clusterFlag("device-speed"), clusterFlag("transfer-time"),
			&cli.BoolFlag{Name: "channels", Usage: "transfers between two devices run one at a time, in the order the programs issue them (the default for a schedule searched with channels)"},
			&cli.BoolFlag{Name: "torch-recv", Usage: "also run the schedule as PyTorch's runtime with receives early and deferred, each rank's sends and receives one at a time"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON object instead of text"},
		},
		Action: func(c *cli.Context) error {
			return runSimulate(c.Context, simulateOptions{
				Schedule: c.String("schedule"), Programs: c.String("programs"), CommTime: c.Int("comm-time"), commSet: c.IsSet("comm-time"),
				Cluster: clusterSpec{File: c.String("cluster"), DeviceSpeed: c.String("device-speed"), TransferTime: c.Int("transfer-time")}, Channels: c.Bool("channels"),
				Blocking: c.Bool("blocking"), TorchRecv: c.Bool("torch-recv"), JSON: c.Bool("json"),
			}, c.App.Writer)
		},
	}
}

// runSimulate simulates the programs of a schedule file (both modes unless
// Blocking) or of a program directory. Unreadable or invalid input is a
// usage error; a deadlock is an error naming the cycle.
func runSimulate(_ context.Context, opts simulateOptions, stdout io.Writer) error {
	if (opts.Schedule == "") == (opts.Programs == "") {
		return usageErrorf("simulate: give one of --schedule FILE and --programs DIR")
	}
	if opts.CommTime < 0 {
		return usageErrorf("--comm-time must be at least 0, got %d", opts.CommTime)
	}
	if opts.TorchRecv && opts.Schedule == "" {
		return usageErrorf("simulate: --torch-recv applies to --schedule")
	}
	var sets [][]*runtimegen.Program
	var scheduleMakespan *int
	var units *quantity.Scale // the schedule's placement's, for times in its unit
	var torch *torchcsv.RecvComparison
	var timing *placement.Placement // times of blocks and transfers; nil: the programs' and CommTime
	sim := runtimegen.SimOptions{CommTime: opts.CommTime, Channels: opts.Channels}
	if opts.Schedule != "" {
		s, err := loadVerified(opts.Schedule)
		if err != nil {
			return err
		}
		given := s.Placement
		if s.Cluster != nil {
			given, timing = s.Given, s.Placement
		}
		on, c, err := opts.Cluster.On(given)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if c != nil {
			timing = on
		}
		if timing != nil && opts.commSet {
			return usageErrorf("simulate: --comm-time does not go with a cluster: transfers take the cluster's times")
		}
		if sets, err = runtimegen.GenerateModes(s, opts.Blocking); err != nil {
			if len(s.Pairs) > 0 || len(s.LinkOrder) > 0 {
				return inputerr.Wrap(err) // a schedule simulate cannot take
			}
			return err
		}
		scheduleMakespan = ptr(schedule.Makespan(s))
		units = s.Placement.Units
		sim = runtimegen.ScheduleSimOptions(s, timing, opts.Channels, opts.CommTime)
		if opts.TorchRecv {
			timed := *s
			if timing != nil {
				timed.Placement = timing
			}
			if torch, err = torchcsv.CompareRecv(&timed, opts.CommTime); err != nil {
				return usageErrorf("%s: --torch-recv: %v", opts.Schedule, err)
			}
		}
	} else {
		if opts.Blocking {
			return usageErrorf("simulate: --blocking applies to --schedule (programs have their own mode)")
		}
		if opts.Cluster != (clusterSpec{}) {
			return usageErrorf("simulate: --cluster, --device-speed and --transfer-time apply to --schedule")
		}
		progs, err := runtimegen.LoadPrograms(opts.Programs)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if err := runtimegen.Check(progs); err != nil {
			return usageErrorf("%s: %v", opts.Programs, err)
		}
		sets = append(sets, progs)
	}
	out, err := runtimegen.SimulateAll(sets, sim)
	if err != nil {
		return err
	}
	out.ScheduleMakespan = scheduleMakespan
	out.SetUnits(units)
	if opts.JSON {
		if torch != nil {
			return printJSON(stdout, struct {
				*runtimegen.Report
				TorchRecv *torchcsv.RecvComparison `json:"torch_recv"`
			}{out, torch})
		}
		return printJSON(stdout, out)
	}
	text, err := out.Text()
	if err != nil {
		return err
	}
	if torch != nil {
		text += "\n" + torch.Text()
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// loadVerified reads a schedule file and verifies it: both failures are
// usage errors (bad input).
func loadVerified(path string) (*schedule.Schedule, error) {
	s, err := schedule.Load(path)
	if err != nil {
		return nil, inputerr.Wrap(err)
	}
	if err := verify.Schedule(s); err != nil {
		return nil, usageErrorf("%s: invalid schedule (see tessel verify): %v", path, err)
	}
	return s, nil
}
