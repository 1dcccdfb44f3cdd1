package main

import (
	"github.com/tessel-pp/tessel/deploy"
	"github.com/urfave/cli/v2"
)

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
			return deploy.Simulate(c.Context, deploy.SimulateOptions{
				Schedule: c.String("schedule"), Programs: c.String("programs"), CommTime: c.Int("comm-time"), CommTimeSet: c.IsSet("comm-time"),
				Cluster: clusterSpec{File: c.String("cluster"), DeviceSpeed: c.String("device-speed"), TransferTime: c.Int("transfer-time")}, QueuedLinks: c.Bool("channels"),
				Blocking: c.Bool("blocking"), TorchRecv: c.Bool("torch-recv"), JSON: c.Bool("json"),
			}, c.App.Writer)
		},
	}
}
