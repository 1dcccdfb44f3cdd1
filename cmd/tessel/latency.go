package main

import (
	"github.com/tessel-pp/tessel/study"
	"github.com/urfave/cli/v2"
)

// latencyBudgetFlag is --latency-budget of search, optimal, compare and
// sweep (placement's "Latency").
func latencyBudgetFlag() cli.Flag {
	return &cli.IntFlag{Name: "latency-budget", Usage: "every micro-batch's latency (its first block's start to its last block's end) at most this; 0: none"}
}

// latencySweepFrom reads sweep's --latency flags.
func latencySweepFrom(c *cli.Context) study.LatencySweepOptions {
	o := study.LatencySweepOptions{On: c.Bool("latency"), File: c.String("placement-file"), Infer: c.Bool("infer"),
		MicroBatches: c.String("micro-batches"), Budgets: c.String("latency-budget"), Efficiency: c.Float64("tp-efficiency")}
	o.BudgetSet = c.IsSet("latency-budget")
	for _, f := range []string{"placement-file", "infer", "micro-batches", "tp-efficiency"} {
		if c.IsSet(f) && o.Given == "" {
			o.Given = f
		}
	}
	return o
}
