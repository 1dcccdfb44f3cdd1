package main

import "github.com/urfave/cli/v2"

// latencyBudgetFlag is --latency-budget of search, optimal, compare and
// sweep (placement's "Latency").
func latencyBudgetFlag() cli.Flag {
	return &cli.IntFlag{Name: "latency-budget", Usage: "every micro-batch's latency (its first block's start to its last block's end) at most this; 0: none"}
}
