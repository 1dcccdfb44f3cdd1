// Command tessel searches pipeline schedules for distributed DNN training
// and inference: the time-optimal schedule of a few micro-batches, the
// repetend schedule of the Tessel paper for any number of them, baselines
// to compare against, and per-device programs that run them.
//
// Each command is an options struct and a run function; urfave/cli only
// parses flags and hands over, so every command is testable with buffers.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/urfave/cli/v2"

	// The C allocator tuned for a program that makes a few Z3 contexts.
	_ "github.com/tessel-pp/tessel/z3/tune"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code: 0 on
// success, 2 on bad input or usage, 1 when the work itself failed.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintf(stderr, "tessel: %s\n", oneLine(err.Error()))
		var ue *usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "tessel",
		Usage: "search pipeline schedules for distributed DNN training and inference",
		Description: "A placement pins the blocks of one micro-batch to devices, with time and memory.\n" +
			"tessel finds when every block of every micro-batch runs: the fewest bubbles under a\n" +
			"per-device memory budget, verified independently of the solver.\n\n" +
			"Start with:  tessel placements\n" +
			"             tessel search --placement m-shape --memory 6\n" +
			"             tessel compare --placement m-shape --memory 6 --micro-batches 128",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Commands:        withUsageErrors(commands()),
		ExitErrHandler:  func(*cli.Context, error) {}, // run() reports errors, one line each
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
	}
}

// commands lists every subcommand, in the order --help shows them.
func commands() []*cli.Command {
	return []*cli.Command{
		placementsCommand(),
		searchCommand(),
		optimalCommand(),
		compareCommand(),
		sweepCommand(),
		verifyCommand(),
		renderCommand(),
		simulateCommand(),
		replanCommand(),
		genCommand(),
		exportCommand(),
		importCommand(),
		partitionCommand(),
		planCommand(),
		genDagCommand(),
	}
}

// withUsageErrors makes a bad flag of any command, or an argument where
// every command takes flags only, a one-line usage error (exit 2) instead
// of a page of help.
func withUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		name, action := c.Name, c.Action
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%s: %v (see tessel %s --help)", name, err, name)
		}
		hint := ""
		if name == "render" || name == "verify" {
			hint = " (use --schedule FILE)"
		}
		c.Action = func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("%s: unexpected argument %q%s", name, c.Args().First(), hint)
			}
			return action(c)
		}
	}
	return cmds
}

// usageError marks bad input (flags, files, placements): exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// oneLine folds a multi-line message so that every error is one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
